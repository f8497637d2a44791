package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// StoreIn are the arguments of store.
type StoreIn struct {
	UserID         *string          `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	Entities       []map[string]any `json:"entities,omitempty" jsonschema:"[{entity_type, ...fields}]"`
	SourcePriority *int             `json:"source_priority,omitempty" jsonschema:"wins where fields disagree; corrections use 1000"`
	Provenance     map[string]any   `json:"provenance,omitempty" jsonschema:"extracted_at (ISO 8601), extractor_version, agent_id, source_refs"`

	FileContent          *string        `json:"file_content,omitempty" jsonschema:"a file, base64; instead of entities"`
	FilePath             *string        `json:"file_path,omitempty" jsonschema:"local file (stdio only)"`
	MimeType             *string        `json:"mime_type,omitempty"`
	OriginalFilename     *string        `json:"original_filename,omitempty"`
	Interpret            *bool          `json:"interpret,omitempty" jsonschema:"queue the file's interpretation (default true)"`
	InterpretationConfig map[string]any `json:"interpretation_config,omitempty"`
}

// StoredEntityOut is one entity a store call wrote to.
type StoredEntityOut struct {
	EntityID      string `json:"entity_id"`
	EntityType    string `json:"entity_type"`
	ObservationID string `json:"observation_id"`
	Created       *bool  `json:"created,omitempty" jsonschema:"absent for a type you may not read"`
}

// InterpretationOut summarises what a store call created.
type InterpretationOut struct {
	RunID               string `json:"run_id"`
	EntitiesCreated     int    `json:"entities_created" jsonschema:"new entities of the types you may read; an entity of a type you may not read is never counted, so the answer does not tell whether it existed"`
	ObservationsCreated int    `json:"observations_created"`
}

// StoreOut is the result of store.
type StoreOut struct {
	SourceID             string             `json:"source_id"`
	ContentHash          string             `json:"content_hash" jsonschema:"SHA-256 of the canonical JSON of the arguments"`
	Deduplicated         bool               `json:"deduplicated" jsonschema:"true when the same content was stored before: nothing new was created (always false when the call names an entity type you may not read)"`
	Interpretation       *InterpretationOut `json:"interpretation"`
	Entities             []StoredEntityOut  `json:"entities" jsonschema:"one line per entity sent, in order. For a type you may not read, entity_id is the id its identity fields give"`
	UnknownFieldsCount   int                `json:"unknown_fields_count" jsonschema:"fields kept as raw fragments because the schema does not name them"`
	RelatedEntities      []EntityOut        `json:"related_entities" jsonschema:"neighbours of the stored entities you may read; empty without graph read"`
	RelatedRelationships []RelationshipOut  `json:"related_relationships" jsonschema:"live relationships of the stored entities you may read, to entities you may read; empty without graph read"`
	SchemaCreated        []SchemaCreatedOut `json:"schema_created,omitempty" jsonschema:"the schemas this call created for entity types no schema described"`
	// A file's store (file_content or file_path) also answers these.
	FileSize  *int64 `json:"file_size,omitempty"`
	MimeType  string `json:"mime_type,omitempty" jsonschema:"detected from the bytes"`
	JobID     string `json:"job_id,omitempty" jsonschema:"the queued interpretation: poll get_job"`
	JobStatus string `json:"job_status,omitempty"`
}

// SchemaCreatedOut is a schema a store call created.
type SchemaCreatedOut struct {
	EntityType     string   `json:"entity_type"`
	SchemaVersion  string   `json:"schema_version"`
	Scope          string   `json:"scope" jsonschema:"user: your own"`
	IdentityFields []string `json:"identity_fields" jsonschema:"inferred: name, title, id or an …_id field; empty means entities are identified by their content"`
	// Fields are the schema's fields and their types, inferred from the
	// call's values.
	Fields map[string]string `json:"fields" jsonschema:"field name to type, inferred from this call's values; fields later stores bring are kept raw until promoted"`
}

// completeLists answers every entity a store touched, however many: the
// budget cuts only the related entities and relationships.
func (StoreOut) completeLists() []string { return []string{"entities"} }

func storeTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "store",
		title: "Store source material",
		description: "Store entities from source material; call list_entity_types first to choose each entity_type. " +
			"Send every field: those the schema lacks are kept as raw fragments. " +
			"A new entity_type gets your own schema (schema_created). " +
			"Repeated arguments create nothing (deduplicated: true). " +
			"A file (file_content, or file_path on stdio) is kept and interpreted in the background (job_id).",
		toolset:   ToolsetEntities,
		ann:       additive,
		budget:    BudgetSummary,
		rateClass: consent.RateClassStore,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "user_id"), idLimit)
			bounds(prop(s, "source_priority"), 0, knowledge.MaxStorePriority)
			setDefault(prop(s, "source_priority"), knowledge.DefaultSourcePriority)
			items := prop(s, "entities").Items
			items.Required = []string{"entity_type"}
			items.Properties = map[string]*jsonschema.Schema{
				"entity_type": {Type: "string", Description: "e.g. invoice, company, person"},
			}
			maxItems := knowledge.MaxEntitiesPerStore
			prop(s, "entities").MaxItems = &maxItems
			// Repeating a store writes nothing new, so its answer pages.
			acceptCursor(s)
		},
	}, func(ctx context.Context, call *Call, in StoreIn) (StoreOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return StoreOut{}, err
		}
		if in.FileContent != nil || in.FilePath != nil {
			if in.Entities != nil {
				return StoreOut{}, &knowledge.ValidationError{Field: "entities", Expected: "entities or a file", Got: "both",
					Message: "send entities or a file (file_content, file_path) in one call, not both"}
			}
			return storeFile(ctx, d, call, in)
		}
		if in.Entities == nil {
			return StoreOut{}, &knowledge.ValidationError{Field: "entities", Expected: "non-empty array of objects", Got: "missing",
				Message: "is required: send entities: [{entity_type, ...fields}]"}
		}
		res, err := d.Knowledge.Store(ctx, call.Caller(), knowledge.StoreRequest{
			Entities: in.Entities, SourcePriority: in.SourcePriority, Provenance: in.Provenance,
		})
		if err != nil {
			return StoreOut{}, err
		}
		if res.Deduplicated {
			// A repeat wrote nothing and so listed nothing related; list it
			// as the first store did, for a cursor's page to continue.
			if err := d.Knowledge.FillStoreRelated(ctx, call.Caller(), &res); err != nil {
				return StoreOut{}, err
			}
		}
		out := StoreOut{
			SourceID: res.Source.ID, ContentHash: res.Source.ContentHash, Deduplicated: res.Deduplicated,
			Interpretation: &InterpretationOut{
				RunID: res.RunID, EntitiesCreated: res.EntitiesCreated, ObservationsCreated: res.ObservationsCreated,
			},
			Entities: mapSlice(res.Entities, func(e knowledge.StoredEntity) StoredEntityOut {
				return StoredEntityOut{EntityID: e.EntityID, EntityType: e.EntityType, ObservationID: e.ObservationID, Created: e.Created}
			}),
			UnknownFieldsCount: res.UnknownFieldsCount,
			RelatedEntities:    mapSlice(res.RelatedEntities, func(e graph.Entity) EntityOut { return entityOut(e, true) }),
			// Store leaves out what the caller may not read (see
			// knowledge.StoreResult).
			RelatedRelationships: mapSlice(res.RelatedRelationships, relationshipOut),
			SchemaCreated: mapSlice(res.SchemasCreated, func(s *schema.Schema) SchemaCreatedOut {
				fields := make(map[string]string, len(s.Fields))
				for name, f := range s.Fields {
					fields[name] = string(f.Type)
				}
				return SchemaCreatedOut{EntityType: s.EntityType, SchemaVersion: s.Version, Scope: s.Scope(), IdentityFields: nonNil(s.IdentityFields), Fields: fields}
			}),
		}
		return out, nil
	})
}

// checkUserID enforces that a user_id argument, when given, names the caller.
func checkUserID(call *Call, userID *string) error {
	if userID == nil || *userID == "" || *userID == call.Principal.UserID {
		return nil
	}
	return &knowledge.ValidationError{
		Field: "user_id", Expected: "your own user id (" + call.Principal.UserID + ") or nothing", Got: "another user's id",
		Message: "names another user; the user comes from the API key, so omit user_id",
	}
}
