package mcp

// The v0 actions of the compat toolset (tools_compat.go), each a
// translation around the Cairn tool it stands for.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/knowledge"
)

// --- submit_payload → store ---

// v0Capabilities are v0's capabilities (§3.1) and the entity type each
// stores: Cairn's built-in types of the same names.
var v0Capabilities = map[string]string{
	"neotoma:store_invoice:v1":     "invoice",
	"neotoma:store_transaction:v1": "transaction",
	"neotoma:store_receipt:v1":     "receipt",
	"neotoma:store_contract:v1":    "contract",
	"neotoma:store_note:v1":        "note",
}

// V0Provenance is a v0 payload's provenance.
type V0Provenance struct {
	SourceRefs       []string `json:"source_refs" jsonschema:"ids of the payloads this one came from"`
	ExtractedAt      string   `json:"extracted_at" jsonschema:"ISO 8601"`
	ExtractorVersion string   `json:"extractor_version"`
	AgentID          *string  `json:"agent_id,omitempty"`
}

// SubmitPayloadIn are the arguments of submit_payload.
type SubmitPayloadIn struct {
	CapabilityID    string         `json:"capability_id"`
	Body            map[string]any `json:"body" jsonschema:"the entity's fields"`
	Provenance      V0Provenance   `json:"provenance"`
	ClientRequestID *string        `json:"client_request_id,omitempty" jsonschema:"accepted; the same body again is deduplicated by content anyway"`
}

// SubmitPayloadOut is v0's answer to submit_payload.
type SubmitPayloadOut struct {
	PayloadID           string `json:"payload_id" jsonschema:"store's source_id"`
	PayloadContentID    string `json:"payload_content_id" jsonschema:"store's content_hash"`
	PayloadSubmissionID string `json:"payload_submission_id" jsonschema:"store's interpretation run_id"`
	Created             bool   `json:"created" jsonschema:"false for a duplicate"`
	Message             string `json:"message"`
}

func submitPayloadTool(store *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "submit_payload", title: "Submit a payload (v0)",
		description: "Neotoma v0's submit_payload: store the body as one entity of the capability's type (store).",
		target:      store,
		shape: func(s *jsonschema.Schema) {
			// Not an enum: v0 answers an unknown one UNKNOWN_CAPABILITY.
			prop(s, "capability_id").Description = "one of " + strings.Join(slices.Sorted(maps.Keys(v0Capabilities)), ", ")
			maxLen(prop(s, "capability_id"), 128)
			maxLen(prop(s, "client_request_id"), idLimit)
		},
	}, func(in SubmitPayloadIn) (StoreIn, error) {
		typ, ok := v0Capabilities[in.CapabilityID]
		if !ok {
			return StoreIn{}, newError(http.StatusBadRequest, CodeUnknownCapability, fmt.Sprintf("unknown capability %q", truncateText(in.CapabilityID, 64)),
				map[string]any{"capability_id": truncateText(in.CapabilityID, 64), "known": slices.Sorted(maps.Keys(v0Capabilities))})
		}
		entity := maps.Clone(in.Body)
		if entity == nil {
			entity = map[string]any{}
		}
		if t, ok := entity["entity_type"]; ok && t != typ {
			return StoreIn{}, &knowledge.ValidationError{Field: "body.entity_type", Expected: typ + " (the capability's) or nothing", Got: fmt.Sprint(t),
				Message: "names another type than the capability"}
		}
		entity["entity_type"] = typ
		prov := map[string]any{"source_refs": nonNil(in.Provenance.SourceRefs), "extracted_at": in.Provenance.ExtractedAt,
			"extractor_version": in.Provenance.ExtractorVersion}
		if in.Provenance.AgentID != nil {
			prov["agent_id"] = *in.Provenance.AgentID
		}
		return StoreIn{Entities: []map[string]any{entity}, Provenance: prov}, nil
	}, func(out StoreOut) SubmitPayloadOut {
		res := SubmitPayloadOut{PayloadID: out.SourceID, PayloadContentID: out.ContentHash, Created: !out.Deduplicated,
			Message: "payload stored and its observations extracted"}
		if out.Interpretation != nil {
			res.PayloadSubmissionID = out.Interpretation.RunID
		}
		if out.Deduplicated {
			res.Message = "the same payload was submitted before; nothing new was stored"
		}
		return res
	})
}

// --- get_entity_snapshot → retrieve_entity_snapshot ---

// V0SnapshotOut is v0's entity snapshot.
type V0SnapshotOut struct {
	EntityID          string            `json:"entity_id"`
	EntityType        string            `json:"entity_type"`
	SchemaVersion     string            `json:"schema_version"`
	Snapshot          map[string]any    `json:"snapshot"`
	Provenance        map[string]string `json:"provenance" jsonschema:"field → observation id"`
	ComputedAt        string            `json:"computed_at"`
	ObservationCount  int               `json:"observation_count"`
	LastObservationAt string            `json:"last_observation_at"`
	RawFields         map[string]any    `json:"raw_fields,omitempty" jsonschema:"not v0: fields the schema does not name (yet)"`
}

func getEntitySnapshotTool(snapshot *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "get_entity_snapshot", title: "Get entity snapshot (v0)",
		description: "Neotoma v0's get_entity_snapshot: an entity's current truth and provenance (retrieve_entity_snapshot).",
		target:      snapshot,
		shape:       func(s *jsonschema.Schema) { maxLen(prop(s, "entity_id"), idLimit); maxLen(prop(s, "at"), 64) },
	}, sameArgs[SnapshotIn], func(out SnapshotOut) V0SnapshotOut {
		return V0SnapshotOut{EntityID: out.EntityID, EntityType: out.EntityType, SchemaVersion: out.SchemaVersion, Snapshot: out.Snapshot,
			Provenance: out.Provenance, ComputedAt: out.ComputedAt, ObservationCount: out.ObservationCount,
			LastObservationAt: out.LastObservationAt, RawFields: out.RawFields}
	})
}

// --- get_field_provenance → retrieve_field_provenance ---

// V0SourceObservation is the observation a field's value came from, as v0
// names it.
type V0SourceObservation struct {
	ID               string  `json:"id"`
	SourceRecordID   string  `json:"source_record_id"`
	ObservedAt       string  `json:"observed_at"`
	SpecificityScore float64 `json:"specificity_score"`
	SourcePriority   int     `json:"source_priority"`
}

// V0SourceRecord is the source material a value came from, as v0's record.
type V0SourceRecord struct {
	ID        string   `json:"id"`
	Type      string   `json:"type" jsonschema:"the source's kind: structured, file, correction, …"`
	FileURLs  []string `json:"file_urls" jsonschema:"ids of the files it was read from, for get_file_url"`
	CreatedAt string   `json:"created_at"`
}

// V0FieldProvenanceOut is v0's answer to get_field_provenance.
type V0FieldProvenanceOut struct {
	Field             string              `json:"field"`
	Value             any                 `json:"value"`
	SourceObservation V0SourceObservation `json:"source_observation"`
	SourceRecord      V0SourceRecord      `json:"source_record"`
	ObservedAt        string              `json:"observed_at"`
}

func getFieldProvenanceTool(provenance *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "get_field_provenance", title: "Get field provenance (v0)",
		description: "Neotoma v0's get_field_provenance: the observation and source a field's value came from (retrieve_field_provenance).",
		target:      provenance,
		shape:       func(s *jsonschema.Schema) { maxLen(prop(s, "entity_id"), idLimit); maxLen(prop(s, "field"), 128) },
	}, sameArgs[FieldProvenanceIn], func(out FieldProvenanceOut) V0FieldProvenanceOut {
		o, src := out.SourceObservation, out.SourceMaterial
		rec := V0SourceRecord{ID: src.ID, Type: src.Kind, FileURLs: []string{}, CreatedAt: src.CreatedAt}
		if out.File != nil {
			rec.FileURLs = []string{out.File.FileID}
		}
		return V0FieldProvenanceOut{
			Field: out.Field, Value: out.Value, ObservedAt: out.ObservedAt, SourceRecord: rec,
			SourceObservation: V0SourceObservation{ID: o.ID, SourceRecordID: o.SourceID, ObservedAt: o.ObservedAt,
				SpecificityScore: o.SpecificityScore, SourcePriority: o.SourcePriority},
		}
	})
}

// --- retrieve_records → retrieve_entities ---

// V0Record is an entity as v0's record.
type V0Record struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Properties map[string]any `json:"properties" jsonschema:"the snapshot, with the fields the schema does not name (yet)"`
	FileURLs   []string       `json:"file_urls" jsonschema:"always empty: files are sources, not attached to entities"`
	Similarity *float64       `json:"similarity,omitempty"`
	CreatedAt  string         `json:"created_at"`
	UpdatedAt  string         `json:"updated_at" jsonschema:"its last observation"`
}

// v0Record is e as a v0 record: its snapshot and its raw fields (the
// snapshot wins where both have a field).
func v0Record(e EntityOut) V0Record {
	props := maps.Clone(e.RawFields)
	if props == nil {
		props = map[string]any{}
	}
	maps.Copy(props, e.Snapshot)
	return V0Record{ID: e.ID, Type: e.EntityType, Properties: props, FileURLs: []string{}, CreatedAt: ts(e.createdAt), UpdatedAt: e.LastObservationAt}
}

// RetrieveRecordsIn are the arguments of retrieve_records.
type RetrieveRecordsIn struct {
	Type                *string        `json:"type,omitempty" jsonschema:"entity type"`
	Properties          map[string]any `json:"properties,omitempty" jsonschema:"not supported: search instead"`
	Limit               *int           `json:"limit,omitempty"`
	Search              []string       `json:"search,omitempty" jsonschema:"words; all must match"`
	SearchMode          *string        `json:"search_mode,omitempty" jsonschema:"keyword: words only; semantic or both: also by meaning"`
	SimilarityThreshold *float64       `json:"similarity_threshold,omitempty" jsonschema:"not supported"`
	QueryEmbedding      []float64      `json:"query_embedding,omitempty" jsonschema:"not supported: Cairn embeds the search itself"`
}

// RetrieveRecordsOut is v0's answer to retrieve_records.
type RetrieveRecordsOut struct {
	Records []V0Record `json:"records"`
	Total   int        `json:"total"`
}

// v0Unsupported refuses a v0 argument that Cairn cannot honour, rather
// than answer as if it had.
func v0Unsupported(field, why string) error {
	return &knowledge.ValidationError{Field: field, Expected: "nothing", Got: "a value", Message: "is not supported: " + why}
}

func retrieveRecordsTool(entities *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "retrieve_records", title: "Retrieve records (v0)",
		description: "Neotoma v0's retrieve_records: entities as records, optionally of one type, or searched (retrieve_entities).",
		target:      entities,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "type"), 128)
			bounds(prop(s, "limit"), 1, maxLimit)
			setDefault(prop(s, "limit"), 10)
			maxItems := 32
			prop(s, "search").MaxItems = &maxItems
			maxLen(prop(s, "search").Items, 128)
			enum(prop(s, "search_mode"), "semantic", "keyword", "both")
		},
	}, func(in RetrieveRecordsIn) (EntitiesIn, error) {
		switch {
		case in.Properties != nil:
			return EntitiesIn{}, v0Unsupported("properties", "Cairn does not filter by field values; put the values in search")
		case in.SimilarityThreshold != nil:
			return EntitiesIn{}, v0Unsupported("similarity_threshold", "Cairn ranks by meaning without a cut-off")
		case in.QueryEmbedding != nil:
			return EntitiesIn{}, v0Unsupported("query_embedding", "Cairn embeds the search words itself, in its own space")
		}
		limit := 10
		if in.Limit != nil {
			limit = *in.Limit
		}
		args := EntitiesIn{EntityType: in.Type, Limit: &limit}
		if q := strings.Join(in.Search, " "); strings.TrimSpace(q) != "" {
			args.Query = &q
			if in.SearchMode != nil {
				meaning := *in.SearchMode != "keyword"
				args.Meaning = &meaning
			}
		}
		return args, nil
	}, func(out EntitiesOut) RetrieveRecordsOut {
		return RetrieveRecordsOut{Total: out.Total, Records: mapSlice(out.Entities, func(h EntityHitOut) V0Record {
			r := v0Record(h.EntityOut)
			r.Similarity = h.Similarity
			return r
		})}
	})
}

// --- update_record → correct ---

// UpdateRecordIn are the arguments of update_record.
type UpdateRecordIn struct {
	ID         string         `json:"id" jsonschema:"entity id"`
	Type       *string        `json:"type,omitempty" jsonschema:"must be the entity's type: a type cannot change"`
	Properties map[string]any `json:"properties,omitempty" jsonschema:"fields to set; each is a correction that wins until corrected again"`
	FileURLs   []string       `json:"file_urls,omitempty" jsonschema:"not supported"`
	Embedding  []float64      `json:"embedding,omitempty" jsonschema:"not supported"`
}

func updateRecordTool(correct, snapshot *Tool) *Tool {
	return compatTool(compatSpec{
		name: "update_record", title: "Update a record (v0)",
		description: "Neotoma v0's update_record: set fields of an entity, each as a correction (correct), and answer the record.",
		target:      correct, also: []*Tool{snapshot},
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "id"), idLimit); maxLen(prop(s, "type"), 128) },
	}, func(ctx context.Context, call *Call, in UpdateRecordIn) (V0Record, error) {
		switch {
		case in.FileURLs != nil:
			return V0Record{}, v0Unsupported("file_urls", "files are sources that entities are read from, not attached to them")
		case in.Embedding != nil:
			return V0Record{}, v0Unsupported("embedding", "Cairn computes embeddings itself")
		}
		snap, err := runTool[SnapshotOut](ctx, call, snapshot, SnapshotIn{EntityID: in.ID})
		if err != nil {
			return V0Record{}, err
		}
		if in.Type != nil && *in.Type != snap.EntityType {
			return V0Record{}, &knowledge.ValidationError{Field: "type", Expected: snap.EntityType, Got: truncateText(*in.Type, 64),
				Message: "cannot change: an entity keeps its type"}
		}
		// One correction a field, in a stable order; each is idempotent,
		// so a call that failed half-way completes when repeated.
		for _, field := range slices.Sorted(maps.Keys(in.Properties)) {
			if _, err := runTool[CorrectOut](ctx, call, correct, CorrectIn{EntityID: snap.EntityID, EntityType: snap.EntityType,
				Field: field, Value: in.Properties[field]}); err != nil {
				return V0Record{}, err
			}
		}
		if len(in.Properties) > 0 {
			if snap, err = runTool[SnapshotOut](ctx, call, snapshot, SnapshotIn{EntityID: snap.EntityID}); err != nil {
				return V0Record{}, err
			}
		}
		return v0Record(EntityOut{ID: snap.EntityID, EntityType: snap.EntityType, Snapshot: snap.Snapshot, RawFields: snap.RawFields,
			LastObservationAt: snap.LastObservationAt, createdAt: snap.createdAt}), nil
	})
}

// --- upload_file → store with file_path ---

// UploadFileIn are the arguments of upload_file.
type UploadFileIn struct {
	FilePath   string  `json:"file_path" jsonschema:"local file (stdio only, under the server's --file-roots)"`
	RecordID   *string `json:"record_id,omitempty" jsonschema:"not supported"`
	Bucket     *string `json:"bucket,omitempty"`
	Properties *string `json:"properties,omitempty" jsonschema:"not supported: submit_payload the record instead"`
}

// UploadFileOut is v0's answer to upload_file. No record: the file is
// interpreted in the background.
type UploadFileOut struct {
	Record      *V0Record `json:"record,omitempty" jsonschema:"never: the file's entities are read from it in the background"`
	FileURL     string    `json:"file_url" jsonschema:"the file's id, for get_file_url"`
	FileSize    int64     `json:"file_size"`
	ContentType string    `json:"content_type"`
}

func uploadFileTool(store *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "upload_file", title: "Upload a file (v0)",
		description: "Neotoma v0's upload_file: keep a local file and interpret it in the background (store with file_path).",
		target:      store,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "file_path"), 4096)
			maxLen(prop(s, "record_id"), idLimit)
			enum(prop(s, "bucket"), "files")
		},
	}, func(in UploadFileIn) (StoreIn, error) {
		switch {
		case in.RecordID != nil:
			return StoreIn{}, v0Unsupported("record_id", "a file is interpreted into entities of its own, not attached to one")
		case in.Properties != nil:
			return StoreIn{}, v0Unsupported("properties", "submit_payload the record, and upload the file without properties")
		}
		return StoreIn{FilePath: &in.FilePath}, nil
	}, func(out StoreOut) UploadFileOut {
		return UploadFileOut{FileURL: out.SourceID, FileSize: deref(out.FileSize), ContentType: out.MimeType}
	})
}

// --- get_file_url → retrieve_file_url ---

func getFileURLTool(fileURL *Tool) *Tool {
	return v0Alias(compatSpec{
		name: "get_file_url", title: "Get a file's URL (v0)",
		description: "Neotoma v0's get_file_url: a time-limited URL to download a stored file (retrieve_file_url, whose answer is v0's).",
		target:      fileURL,
		shape:       func(s *jsonschema.Schema) { copyProps(s, fileURL.InputSchema(), "file_path", "expires_in") },
	}, sameArgs[FileURLIn], func(out FileURLOut) FileURLOut { return out })
}

// copyProps gives s the bounds and defaults that from declares for the
// named properties, for an alias that takes the same arguments.
func copyProps(s, from *jsonschema.Schema, names ...string) {
	for _, n := range names {
		s.Properties[n] = prop(from, n).CloneSchemas()
	}
}
