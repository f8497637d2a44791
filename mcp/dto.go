package mcp

import (
	"time"

	"github.com/cairnkg/cairn/graph"
)

// Wire shapes shared by several tools. Field names follow the Neotoma v1
// specification; times are RFC 3339 strings in UTC.

// EntityOut is an entity in lists.
type EntityOut struct {
	ID                string         `json:"id"`
	EntityType        string         `json:"entity_type"`
	CanonicalName     string         `json:"canonical_name"`
	Snapshot          map[string]any `json:"snapshot,omitempty" jsonschema:"current truth, present unless include_snapshots is false"`
	RawFields         map[string]any `json:"raw_fields,omitempty" jsonschema:"with the snapshot: fields your sources gave that the schema does not name (yet), the latest value of each"`
	ObservationCount  int            `json:"observation_count"`
	LastObservationAt string         `json:"last_observation_at"`
	MergedInto        string         `json:"merged_into,omitempty" jsonschema:"set when the entity was merged into another"`
	// createdAt is when the entity was first stored: not on the wire, for
	// the Neotoma v0 aliases, whose records carry it (tools_compat.go).
	createdAt time.Time
}

func entityOut(e graph.Entity, withSnapshot bool) EntityOut {
	out := EntityOut{
		ID: e.ID, EntityType: e.Type, CanonicalName: e.CanonicalName,
		ObservationCount: e.ObservationCount, LastObservationAt: ts(e.LastObservationAt), MergedInto: e.MergedInto,
		createdAt: e.CreatedAt,
	}
	if withSnapshot {
		out.Snapshot = orEmpty(e.Snapshot)
	}
	return out
}

// RelationshipOut is a relationship in lists.
type RelationshipOut struct {
	ID               string         `json:"id"`
	RelationshipType string         `json:"relationship_type"`
	SourceEntityID   string         `json:"source_entity_id"`
	TargetEntityID   string         `json:"target_entity_id"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	CreatedAt        string         `json:"created_at"`
	EndedAt          string         `json:"ended_at,omitempty" jsonschema:"set when the relationship was deleted or superseded"`
}

func relationshipOut(r graph.Relationship) RelationshipOut {
	return RelationshipOut{
		ID: r.ID, RelationshipType: r.Type, SourceEntityID: r.SourceEntityID, TargetEntityID: r.TargetEntityID,
		Metadata: r.Metadata, CreatedAt: ts(r.CreatedAt), EndedAt: ts(r.EndedAt),
	}
}

// ObservationOut is an observation as list_observations returns it.
type ObservationOut struct {
	ID               string         `json:"id"`
	EntityID         string         `json:"entity_id"`
	EntityType       string         `json:"entity_type"`
	SchemaVersion    string         `json:"schema_version"`
	SourceID         string         `json:"source_id"`
	ObservedAt       string         `json:"observed_at"`
	SpecificityScore float64        `json:"specificity_score"`
	SourcePriority   int            `json:"source_priority"`
	Fields           map[string]any `json:"fields"`
	CreatedAt        string         `json:"created_at"`
}

func observationOut(o graph.Observation) ObservationOut {
	return ObservationOut{
		ID: o.ID, EntityID: o.EntityID, EntityType: o.EntityType, SchemaVersion: o.SchemaVersion, SourceID: o.SourceID,
		ObservedAt: ts(o.ObservedAt), SpecificityScore: o.SpecificityScore, SourcePriority: o.SourcePriority,
		Fields: orEmpty(o.Fields), CreatedAt: ts(o.CreatedAt),
	}
}

// SourceOut is source material's metadata.
type SourceOut struct {
	ID               string `json:"id"`
	Kind             string `json:"kind" jsonschema:"structured, file, correction, relationship or merge"`
	MimeType         string `json:"mime_type,omitempty"`
	ContentHash      string `json:"content_hash"`
	OriginalFilename string `json:"original_filename,omitempty"`
	Size             int64  `json:"size"`
	CreatedAt        string `json:"created_at"`
}

func sourceOut(s graph.Source) SourceOut {
	return SourceOut{
		ID: s.ID, Kind: s.Kind, MimeType: s.MimeType, ContentHash: s.ContentHash,
		OriginalFilename: s.OriginalFilename, Size: s.Size, CreatedAt: ts(s.CreatedAt),
	}
}

// TimelineEventOut is a timeline event.
type TimelineEventOut struct {
	ID             string         `json:"id"`
	EventType      string         `json:"event_type"`
	EventTimestamp string         `json:"event_timestamp"`
	SourceID       string         `json:"source_id"`
	EntityIDs      []string       `json:"entity_ids"`
	Properties     map[string]any `json:"properties"`
}

func timelineEventOut(e graph.TimelineEvent) TimelineEventOut {
	return TimelineEventOut{
		ID: e.ID, EventType: e.EventType, EventTimestamp: e.Timestamp, SourceID: e.SourceID,
		EntityIDs: []string{e.EntityID}, Properties: orEmpty(e.Properties),
	}
}

// ts formats a time for the wire; the zero time is the empty string.
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// mapSlice converts a slice element by element.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// nonNil returns s, or an empty slice for nil, so that it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
