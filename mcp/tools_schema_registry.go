package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// The schema registry's error codes (Neotoma v1 §3.20, §3.21).
const (
	CodeSchemaNotFound = "SCHEMA_NOT_FOUND"
	CodeSchemaExists   = "SCHEMA_EXISTS"
	CodeUserIDRequired = "USER_ID_REQUIRED"
)

// schemaError maps the registry's errors onto their codes; ok is false for
// any other error.
func schemaError(err error) (*Error, bool) {
	var se *schema.Error
	switch {
	case errors.As(err, &se) && errors.Is(err, schema.ErrExists):
		return newError(http.StatusConflict, CodeSchemaExists, se.Error(), map[string]any{"entity_type": se.EntityType, "schema_version": se.Version, "scope": se.Scope}), true
	case errors.As(err, &se):
		return newError(http.StatusNotFound, CodeSchemaNotFound, se.Error(), map[string]any{"entity_type": se.EntityType, "scope": se.Scope}), true
	case errors.Is(err, schema.ErrNotFound):
		return newError(http.StatusNotFound, CodeSchemaNotFound, err.Error(), nil), true
	case errors.Is(err, knowledge.ErrUserIDRequired):
		return newError(http.StatusBadRequest, CodeUserIDRequired, err.Error(), map[string]any{"field": "user_id"}), true
	}
	return nil, false
}

// schemaScope decides a schema call's scope from user_specific and user_id
// as the specification has them: user_specific (default false) makes it the
// caller's own and then needs user_id, which must be the caller's; a global
// change needs the owner agent on a deployment whose operator allows global
// schemas (--allow-global-schemas). A user-scoped change needs schema write.
func schemaScope(d Deps, call *Call, userSpecific *bool, userID *string) (global bool, err error) {
	if err := checkUserID(call, userID); err != nil {
		return false, err
	}
	if userSpecific != nil && *userSpecific {
		if userID == nil || *userID == "" {
			return false, newError(http.StatusBadRequest, CodeUserIDRequired,
				fmt.Sprintf("user_specific: true needs user_id: pass your own, %q", call.Principal.UserID),
				map[string]any{"field": "user_id", "user_id": call.Principal.UserID})
		}
		return false, call.Require(consent.Write, consent.ResourceSchema)
	}
	if !call.Principal.Owner || !d.allowGlobalSchemas {
		return false, newError(http.StatusForbidden, CodeForbidden,
			"a global schema needs the owner agent on a deployment started with --allow-global-schemas; pass user_specific: true and your user_id for your own schema",
			map[string]any{"field": "user_specific"})
	}
	return true, nil
}

// FieldDefIn is one field of register_schema's schema_definition.
type FieldDefIn struct {
	Type        string  `json:"type"`
	Required    *bool   `json:"required,omitempty"`
	Description *string `json:"description,omitempty"`
	Identifier  *bool   `json:"identifier,omitempty" jsonschema:"indexed for retrieve_entity_by_identifier"`
	EventType   *string `json:"event_type,omitempty" jsonschema:"a date field's timeline event"`
}

// RelTypeIn is a relationship type a schema registers.
type RelTypeIn struct {
	Name    string `json:"name"`
	Acyclic *bool  `json:"acyclic,omitempty"`
}

// SchemaDefinitionIn is register_schema's schema_definition.
type SchemaDefinitionIn struct {
	Fields            map[string]FieldDefIn `json:"fields"`
	Description       *string               `json:"description,omitempty" jsonschema:"what the type holds; list_entity_types searches it"`
	IdentityFields    []string              `json:"identity_fields,omitempty" jsonschema:"fields whose values give the entity id"`
	NameFields        []string              `json:"name_fields,omitempty"`
	RelationshipTypes []RelTypeIn           `json:"relationship_types,omitempty"`
}

// MergePolicyIn is one field's reducer configuration.
type MergePolicyIn struct {
	Strategy   string  `json:"strategy"`
	TieBreaker *string `json:"tie_breaker,omitempty"`
}

// ReducerConfigIn is register_schema's reducer_config.
type ReducerConfigIn struct {
	MergePolicies map[string]MergePolicyIn `json:"merge_policies"`
}

// RegisterSchemaIn are the arguments of register_schema.
type RegisterSchemaIn struct {
	EntityType       string             `json:"entity_type"`
	SchemaDefinition SchemaDefinitionIn `json:"schema_definition"`
	ReducerConfig    ReducerConfigIn    `json:"reducer_config"`
	SchemaVersion    *string            `json:"schema_version,omitempty"`
	UserSpecific     *bool              `json:"user_specific,omitempty"`
	UserID           *string            `json:"user_id,omitempty"`
	Activate         *bool              `json:"activate,omitempty"`
}

// RegisterSchemaOut is register_schema's answer.
type RegisterSchemaOut struct {
	Success       bool   `json:"success"`
	EntityType    string `json:"entity_type"`
	SchemaVersion string `json:"schema_version"`
	Activated     bool   `json:"activated"`
	Scope         string `json:"scope" jsonschema:"global or user"`
	SchemaID      string `json:"schema_id"`
}

var fieldTypeNames = []string{"string", "number", "date", "boolean", "array", "object"}
var strategyNames = []string{"last_write", "highest_priority", "most_specific", "merge_array"}

func registerSchemaTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "register_schema",
		title: "Register a schema",
		description: "Register an entity type's schema, or a new version of it (versions are immutable). " +
			"user_specific: true with your user_id for your own; global needs the owner agent and the operator's consent.",
		toolset: ToolsetSchemaRegistry, ann: additiveNI, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "entity_type"), 128)
			setDefault(prop(s, "user_specific"), false)
			setDefault(prop(s, "activate"), false)
			def := prop(s, "schema_definition")
			enum(prop(prop(def, "fields").AdditionalProperties, "type"), fieldTypeNames...)
			enum(prop(prop(prop(s, "reducer_config"), "merge_policies").AdditionalProperties, "strategy"), strategyNames...)
		},
	}, func(ctx context.Context, call *Call, in RegisterSchemaIn) (RegisterSchemaOut, error) {
		global, err := schemaScope(d, call, in.UserSpecific, in.UserID)
		if err != nil {
			return RegisterSchemaOut{}, err
		}
		sc := &schema.Schema{
			EntityType: in.EntityType, Version: deref(in.SchemaVersion), Description: deref(in.SchemaDefinition.Description),
			Fields: map[string]schema.Field{}, IdentityFields: in.SchemaDefinition.IdentityFields, NameFields: in.SchemaDefinition.NameFields,
		}
		for name, f := range in.SchemaDefinition.Fields {
			sc.Fields[name] = schema.Field{
				Type: schema.FieldType(f.Type), Required: f.Required != nil && *f.Required, Description: deref(f.Description),
				Identifier: f.Identifier != nil && *f.Identifier, EventType: deref(f.EventType),
			}
		}
		for name, p := range in.ReducerConfig.MergePolicies {
			f, ok := sc.Fields[name]
			if !ok {
				return RegisterSchemaOut{}, &knowledge.ValidationError{Field: "reducer_config.merge_policies." + name, Expected: "a field of schema_definition.fields",
					Got: "string", Message: fmt.Sprintf("%q is not a field of the schema", truncateText(name, 64))}
			}
			f.Policy = schema.MergePolicy(p.Strategy)
			sc.Fields[name] = f
		}
		for _, rt := range in.SchemaDefinition.RelationshipTypes {
			sc.RelationshipTypes = append(sc.RelationshipTypes, schema.RelationshipType{Name: rt.Name, Acyclic: rt.Acyclic != nil && *rt.Acyclic})
		}
		if len(sc.NameFields) == 0 {
			sc.NameFields = sc.IdentityFields
		}
		ch, err := d.Knowledge.RegisterSchema(ctx, call.Caller(), knowledge.RegisterSchemaRequest{
			Schema: sc, Global: global, Activate: in.Activate != nil && *in.Activate, By: call.Principal.AgentName,
		})
		if err != nil {
			return RegisterSchemaOut{}, err
		}
		return RegisterSchemaOut{Success: true, EntityType: ch.Schema.EntityType, SchemaVersion: ch.Schema.Version,
			Activated: ch.Activated, Scope: ch.Schema.Scope(), SchemaID: ch.ID}, nil
	})
}

// FieldToAddIn is one field update_schema_incremental adds.
type FieldToAddIn struct {
	FieldName       string  `json:"field_name"`
	FieldType       string  `json:"field_type"`
	Required        *bool   `json:"required,omitempty"`
	ReducerStrategy *string `json:"reducer_strategy,omitempty"`
}

// UpdateSchemaIn are the arguments of update_schema_incremental.
type UpdateSchemaIn struct {
	EntityType       string         `json:"entity_type"`
	FieldsToAdd      []FieldToAddIn `json:"fields_to_add,omitempty" jsonschema:"required unless recommendation_id is given"`
	RecommendationID *string        `json:"recommendation_id,omitempty" jsonschema:"approve and apply a recommendation (get_schema_recommendations)"`
	SchemaVersion    *string        `json:"schema_version,omitempty" jsonschema:"default: the next minor version"`
	UserSpecific     *bool          `json:"user_specific,omitempty"`
	UserID           *string        `json:"user_id,omitempty"`
	Activate         *bool          `json:"activate,omitempty"`
	MigrateExisting  *bool          `json:"migrate_existing,omitempty" jsonschema:"turn your raw fragments of the new fields into observations"`
}

// UpdateSchemaOut is update_schema_incremental's answer.
type UpdateSchemaOut struct {
	Success          bool     `json:"success"`
	EntityType       string   `json:"entity_type"`
	SchemaVersion    string   `json:"schema_version"`
	FieldsAdded      []string `json:"fields_added"`
	Activated        bool     `json:"activated"`
	MigratedExisting bool     `json:"migrated_existing"`
	MigratedCount    int      `json:"migrated_count" jsonschema:"raw fragments that became observations"`
	Scope            string   `json:"scope" jsonschema:"global or user"`
}

func updateSchemaIncrementalTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "update_schema_incremental",
		title: "Add fields to a schema",
		description: "Add fields to an entity type's schema as a new version, active at once; migrate_existing backfills them " +
			"from raw fragments. recommendation_id applies a recommendation. Scope as for register_schema.",
		toolset: ToolsetSchemaRegistry, ann: additiveNI, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "entity_type"), 128)
			maxLen(prop(s, "recommendation_id"), idLimit)
			setDefault(prop(s, "user_specific"), false)
			setDefault(prop(s, "activate"), true)
			setDefault(prop(s, "migrate_existing"), false)
			item := prop(s, "fields_to_add").Items
			enum(prop(item, "field_type"), fieldTypeNames...)
			enum(prop(item, "reducer_strategy"), strategyNames...)
		},
	}, func(ctx context.Context, call *Call, in UpdateSchemaIn) (UpdateSchemaOut, error) {
		global, err := schemaScope(d, call, in.UserSpecific, in.UserID)
		if err != nil {
			return UpdateSchemaOut{}, err
		}
		migrate := in.MigrateExisting != nil && *in.MigrateExisting
		typ := schema.NormalizeTypeName(in.EntityType)
		if migrate {
			if err := call.Require(consent.Write, knowledge.EntityResource(typ)); err != nil {
				return UpdateSchemaOut{}, err
			}
		}
		req := knowledge.SchemaUpdateRequest{
			EntityType: typ, Version: deref(in.SchemaVersion), Global: global, Activate: in.Activate == nil || *in.Activate,
			MigrateExisting: migrate, RecommendationID: deref(in.RecommendationID), By: call.Principal.AgentName,
		}
		for _, f := range in.FieldsToAdd {
			req.Fields = append(req.Fields, knowledge.NewField{Name: f.FieldName, Type: schema.FieldType(f.FieldType),
				Required: f.Required != nil && *f.Required, Policy: schema.MergePolicy(deref(f.ReducerStrategy))})
		}
		ch, err := d.Knowledge.UpdateSchemaIncremental(ctx, call.Caller(), req)
		if err != nil {
			return UpdateSchemaOut{}, err
		}
		return UpdateSchemaOut{Success: true, EntityType: ch.Schema.EntityType, SchemaVersion: ch.Schema.Version,
			FieldsAdded: nonNil(ch.FieldsAdded), Activated: ch.Activated, MigratedExisting: migrate && ch.Activated && len(ch.FieldsAdded) > 0,
			MigratedCount: ch.Migrated, Scope: ch.Schema.Scope()}, nil
	})
}

// AnalyzeIn are the arguments of analyze_schema_candidates.
type AnalyzeIn struct {
	EntityType    *string  `json:"entity_type,omitempty" jsonschema:"default: every type"`
	UserID        *string  `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	MinFrequency  *int     `json:"min_frequency,omitempty"`
	MinConfidence *float64 `json:"min_confidence,omitempty"`
}

// CandidateFieldOut is one field analyze_schema_candidates proposes.
type CandidateFieldOut struct {
	FieldName          string  `json:"field_name"`
	FieldType          string  `json:"field_type"`
	Frequency          int     `json:"frequency" jsonschema:"raw fragments of the field"`
	Confidence         float64 `json:"confidence" jsonschema:"type consistency, scaled down under 3 occurrences or 2 sources"`
	TypeConsistency    float64 `json:"type_consistency"`
	SampleValues       []any   `json:"sample_values" jsonschema:"up to 10 distinct values"`
	NamingPatternMatch bool    `json:"naming_pattern_match" jsonschema:"snake_case like schema fields"`
	SourceCount        int     `json:"source_count"`
}

// TypeCandidatesOut are one type's candidate fields.
type TypeCandidatesOut struct {
	EntityType      string              `json:"entity_type"`
	Fields          []CandidateFieldOut `json:"fields"`
	Source          string              `json:"source"`
	ConfidenceScore float64             `json:"confidence_score"`
	Reasoning       string              `json:"reasoning"`
}

// AnalyzeOut is analyze_schema_candidates' answer.
type AnalyzeOut struct {
	Recommendations  []TypeCandidatesOut `json:"recommendations"`
	TotalEntityTypes int                 `json:"total_entity_types"`
	TotalFields      int                 `json:"total_fields"`
	MinFrequency     int                 `json:"min_frequency"`
	MinConfidence    float64             `json:"min_confidence"`
}

func analyzeSchemaCandidatesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "analyze_schema_candidates",
		title: "Analyze schema candidates",
		description: "Find fields that stored data carries but schemas do not name (raw fragments), with frequency, type " +
			"consistency and samples: candidates for update_schema_incremental.",
		toolset: ToolsetSchemaRegistry, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceSchema),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "entity_type"), 128)
			bounds(prop(s, "min_frequency"), 1, 1_000_000)
			bounds(prop(s, "min_confidence"), 0, 1)
			setDefault(prop(s, "min_frequency"), schema.DefaultCandidateFrequency)
			setDefault(prop(s, "min_confidence"), schema.DefaultCandidateConfidence)
		},
	}, func(ctx context.Context, call *Call, in AnalyzeIn) (AnalyzeOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return AnalyzeOut{}, err
		}
		req := knowledge.AnalyzeRequest{EntityType: deref(in.EntityType), MinConfidence: in.MinConfidence}
		if in.MinFrequency != nil {
			req.MinFrequency = *in.MinFrequency
		}
		an, err := d.Knowledge.AnalyzeSchemaCandidates(ctx, call.Caller(), req)
		if err != nil {
			return AnalyzeOut{}, err
		}
		out := AnalyzeOut{TotalEntityTypes: an.TotalEntityTypes, TotalFields: an.TotalFields, MinFrequency: an.MinFrequency,
			MinConfidence: an.MinConfidence, Recommendations: []TypeCandidatesOut{}}
		for _, tc := range an.Recommendations {
			t := TypeCandidatesOut{EntityType: tc.EntityType, Source: schema.RecommendationFromRawFragments,
				ConfidenceScore: tc.ConfidenceScore, Reasoning: tc.Reasoning}
			for _, f := range tc.Fields {
				t.Fields = append(t.Fields, CandidateFieldOut{FieldName: f.Name, FieldType: string(f.Type), Frequency: f.Frequency,
					Confidence: f.Confidence, TypeConsistency: f.TypeConsistency, SampleValues: f.SampleValues,
					NamingPatternMatch: f.NamingPatternMatch, SourceCount: f.Sources})
			}
			out.Recommendations = append(out.Recommendations, t)
		}
		return out, nil
	})
}

// RecommendationsIn are the arguments of get_schema_recommendations.
type RecommendationsIn struct {
	EntityType string  `json:"entity_type"`
	UserID     *string `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	Source     *string `json:"source,omitempty"`
	Status     *string `json:"status,omitempty"`
}

// RecommendedFieldOut is a field a recommendation adds.
type RecommendedFieldOut struct {
	FieldName string `json:"field_name"`
	FieldType string `json:"field_type"`
	Required  bool   `json:"required"`
}

// RecommendationOut is one stored recommendation.
type RecommendationOut struct {
	ID              string                `json:"id" jsonschema:"pass as recommendation_id to update_schema_incremental to apply it"`
	EntityType      string                `json:"entity_type"`
	Fields          []RecommendedFieldOut `json:"fields"`
	Source          string                `json:"source"`
	ConfidenceScore float64               `json:"confidence_score"`
	Reasoning       string                `json:"reasoning"`
	Status          string                `json:"status" jsonschema:"pending, approved, rejected, applied or auto_applied"`
}

// RecommendationsOut is get_schema_recommendations' answer.
type RecommendationsOut struct {
	Recommendations []RecommendationOut `json:"recommendations"`
	Total           int                 `json:"total"`
	EntityType      string              `json:"entity_type"`
}

func getSchemaRecommendationsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "get_schema_recommendations",
		title:       "Get schema recommendations",
		description: "List stored recommendations to add fields to a type's schema, from your data and auto-enhancement, by status.",
		toolset:     ToolsetSchemaRegistry, ann: readOnly, budget: BudgetSummary, requires: reads(consent.ResourceSchema),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "entity_type"), 128)
			enum(prop(s, "source"), "raw_fragments", "agent", "inference", "all")
			enum(prop(s, "status"), "pending", "approved", "rejected", "applied", "auto_applied", "all")
			setDefault(prop(s, "source"), "all")
			setDefault(prop(s, "status"), "pending")
		},
	}, func(ctx context.Context, call *Call, in RecommendationsIn) (RecommendationsOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return RecommendationsOut{}, err
		}
		typ := schema.NormalizeTypeName(in.EntityType)
		recs, err := d.Knowledge.SchemaRecommendations(ctx, call.Caller(), typ, deref(in.Source), schema.RecommendationStatus(deref(in.Status)))
		if err != nil {
			return RecommendationsOut{}, err
		}
		out := RecommendationsOut{EntityType: typ, Total: len(recs), Recommendations: []RecommendationOut{}}
		for _, r := range recs {
			ro := RecommendationOut{ID: r.ID, EntityType: r.EntityType, Source: r.Source, ConfidenceScore: r.Confidence,
				Reasoning: r.Reasoning, Status: string(r.Status), Fields: []RecommendedFieldOut{}}
			for _, f := range r.Fields {
				ro.Fields = append(ro.Fields, RecommendedFieldOut{FieldName: f.Name, FieldType: string(f.Type), Required: f.Required})
			}
			out.Recommendations = append(out.Recommendations, ro)
		}
		return out, nil
	})
}
