package mcp

import (
	"context"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// Page limits of list tools.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

func pageShape(s *jsonschema.Schema) {
	bounds(prop(s, "limit"), 1, maxLimit)
	setDefault(prop(s, "limit"), defaultLimit)
	bounds(prop(s, "offset"), 0, 1e9)
	setDefault(prop(s, "offset"), 0)
}

func page(limit, offset *int) graph.Page {
	p := graph.Page{Limit: defaultLimit}
	if limit != nil {
		p.Limit = *limit
	}
	if offset != nil {
		p.Offset = *offset
	}
	return p
}

// optionalTime parses an optional ISO 8601 argument.
func optionalTime(field string, s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	return knowledge.ParseTime(field, *s)
}

// --- retrieve_entity_snapshot ---

// SnapshotIn are the arguments of retrieve_entity_snapshot.
type SnapshotIn struct {
	EntityID string  `json:"entity_id"`
	At       *string `json:"at,omitempty" jsonschema:"ISO 8601 time: as it was then"`
}

// SnapshotOut is an entity snapshot with provenance.
type SnapshotOut struct {
	EntityID          string            `json:"entity_id"`
	EntityType        string            `json:"entity_type"`
	CanonicalName     string            `json:"canonical_name"`
	SchemaVersion     string            `json:"schema_version"`
	Snapshot          map[string]any    `json:"snapshot" jsonschema:"current truth, computed by the reducer from the observations"`
	Provenance        map[string]string `json:"provenance" jsonschema:"field → id of the observation whose value the field holds"`
	ComputedAt        string            `json:"computed_at"`
	ObservationCount  int               `json:"observation_count"`
	LastObservationAt string            `json:"last_observation_at"`
	RawFields         map[string]any    `json:"raw_fields,omitempty" jsonschema:"fields your sources gave that the schema does not name (yet): the latest value of each"`
	// createdAt is when the entity was first stored: not on the wire, for
	// the Neotoma v0 aliases (tools_compat.go).
	createdAt time.Time
}

func retrieveEntitySnapshotTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retrieve_entity_snapshot",
		title: "Retrieve entity snapshot",
		description: "Open an entity by id: its snapshot (current truth) and the observation each field came from; " +
			"for its relationships and sources, retrieve_graph_neighborhood.",
		toolset: ToolsetEntities, ann: readOnly, budget: BudgetSummary,
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "entity_id"), idLimit); maxLen(prop(s, "at"), 64) },
	}, func(ctx context.Context, call *Call, in SnapshotIn) (SnapshotOut, error) {
		at, err := optionalTime("at", in.At)
		if err != nil {
			return SnapshotOut{}, err
		}
		snap, err := d.Knowledge.EntitySnapshot(ctx, call.Caller(), in.EntityID, at)
		if err != nil {
			return SnapshotOut{}, err
		}
		e := snap.Entity
		out := SnapshotOut{
			EntityID: e.ID, EntityType: e.Type, CanonicalName: e.CanonicalName, SchemaVersion: e.SchemaVersion,
			Snapshot: orEmpty(e.Snapshot), Provenance: e.Provenance, ComputedAt: ts(snap.ComputedAt),
			ObservationCount: e.ObservationCount, LastObservationAt: ts(e.LastObservationAt), createdAt: e.CreatedAt,
		}
		if at.IsZero() {
			raw, err := d.Knowledge.RawFields(ctx, call.Caller(), e)
			if err != nil {
				return SnapshotOut{}, err
			}
			if len(raw) > 0 {
				out.RawFields = raw
			}
		}
		return out, nil
	})
}

// --- retrieve_entities ---

// EntitiesIn are the arguments of retrieve_entities.
type EntitiesIn struct {
	Query            *string `json:"query,omitempty" jsonschema:"search words; all must match a name or snapshot value, the last as a prefix; best first"`
	Meaning          *bool   `json:"meaning,omitempty" jsonschema:"with query: true also ranks by meaning (slower), false: words only; unset: by meaning if no word matches"`
	EntityType       *string `json:"entity_type,omitempty"`
	UserID           *string `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	Limit            *int    `json:"limit,omitempty"`
	Offset           *int    `json:"offset,omitempty"`
	IncludeSnapshots *bool   `json:"include_snapshots,omitempty"`
	IncludeMerged    *bool   `json:"include_merged,omitempty"`
}

// EntityHitOut is an entity of retrieve_entities; a search says why it
// matched.
type EntityHitOut struct {
	EntityOut
	Score      *float64 `json:"score,omitempty" jsonschema:"with query: relevance, higher is better"`
	Similarity *float64 `json:"similarity,omitempty" jsonschema:"cosine similarity to the query, when it matched by meaning"`
	Matched    []string `json:"matched,omitempty" jsonschema:"with query: the signals that found it: vector, text"`
}

// EntitiesOut is a page of entities.
type EntitiesOut struct {
	Entities       []EntityHitOut `json:"entities"`
	Total          int            `json:"total"`
	Limit          int            `json:"limit"`
	Offset         int            `json:"offset"`
	ExcludedMerged bool           `json:"excluded_merged" jsonschema:"true when merged entities were left out"`
}

func retrieveEntitiesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "retrieve_entities",
		title:       "Retrieve entities",
		description: "List entities, most recently observed first, optionally of one type, with their snapshots; with query, search them, best first.",
		toolset:     ToolsetEntities, ann: readOnly, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			pageShape(s)
			maxLen(prop(s, "query"), 512)
			setDefault(prop(s, "meaning"), false)
			maxLen(prop(s, "entity_type"), 128)
			maxLen(prop(s, "user_id"), idLimit)
			setDefault(prop(s, "include_snapshots"), true)
			setDefault(prop(s, "include_merged"), false)
		},
	}, func(ctx context.Context, call *Call, in EntitiesIn) (EntitiesOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return EntitiesOut{}, err
		}
		q := knowledge.EntityQuery{Page: page(in.Limit, in.Offset), IncludeMerged: in.IncludeMerged != nil && *in.IncludeMerged}
		if in.EntityType != nil {
			q.EntityType = *in.EntityType
		}
		withSnap := in.IncludeSnapshots == nil || *in.IncludeSnapshots
		out := EntitiesOut{Limit: q.Page.Limit, Offset: q.Page.Offset, ExcludedMerged: !q.IncludeMerged}
		if in.Query != nil && *in.Query != "" {
			hits, total, err := d.Knowledge.SearchEntities(ctx, call.Caller(), knowledge.EntitySearchQuery{
				Text: *in.Query, Meaning: meaningMode(in.Meaning),
				EntityType: q.EntityType, IncludeMerged: q.IncludeMerged, Page: q.Page,
				Complete: completing(ctx) && q.Page.Offset == 0,
			})
			if err != nil {
				return EntitiesOut{}, err
			}
			out.Total = total
			out.Entities = mapSlice(hits, func(h knowledge.EntitySearchHit) EntityHitOut {
				return EntityHitOut{EntityOut: entityOut(h.Entity, withSnap), Score: &h.Score, Similarity: h.Similarity, Matched: signalNames(h.Signals)}
			})
			if withSnap {
				ents := mapSlice(hits, func(h knowledge.EntitySearchHit) graph.Entity { return h.Entity })
				if err := withRawFields(ctx, d, call, ents, func(i int) *EntityOut { return &out.Entities[i].EntityOut }); err != nil {
					return EntitiesOut{}, err
				}
			}
			return out, nil
		}
		ents, total, err := d.Knowledge.ListEntities(ctx, call.Caller(), q)
		if err != nil {
			return EntitiesOut{}, err
		}
		out.Total = total
		out.Entities = mapSlice(ents, func(e graph.Entity) EntityHitOut { return EntityHitOut{EntityOut: entityOut(e, withSnap)} })
		if withSnap {
			if err := withRawFields(ctx, d, call, ents, func(i int) *EntityOut { return &out.Entities[i].EntityOut }); err != nil {
				return EntitiesOut{}, err
			}
		}
		return out, nil
	})
}

// withRawFields sets the raw_fields of entities shown with their
// snapshots: what their sources gave that their schemas do not name yet is
// shown where the snapshot is (a new type's first store, or a field a
// built-in type lacks, would otherwise show no facts), read for all of them
// at once. out(i) is the answer's entity for ents[i].
func withRawFields(ctx context.Context, d Deps, call *Call, ents []graph.Entity, out func(i int) *EntityOut) error {
	raw, err := d.Knowledge.RawFieldsOf(ctx, call.Caller(), ents)
	if err != nil {
		return err
	}
	for i, e := range ents {
		if r := raw[e.ID]; len(r) > 0 {
			out(i).RawFields = r
		}
	}
	return nil
}

// entityOuts are ents with their snapshots and raw fields.
func entityOuts(ctx context.Context, d Deps, call *Call, ents []graph.Entity) ([]EntityOut, error) {
	outs := mapSlice(ents, func(e graph.Entity) EntityOut { return entityOut(e, true) })
	return outs, withRawFields(ctx, d, call, ents, func(i int) *EntityOut { return &outs[i] })
}

// meaningMode maps retrieve_entities' meaning argument to the search's
// mode: unset, by meaning only when no entity matches the words.
func meaningMode(m *bool) knowledge.MeaningMode {
	switch {
	case m == nil:
		return knowledge.MeaningFallback
	case *m:
		return knowledge.MeaningAlways
	}
	return knowledge.MeaningNever
}

// --- retrieve_entity_by_identifier ---

// ByIdentifierIn are the arguments of retrieve_entity_by_identifier.
type ByIdentifierIn struct {
	Identifier string  `json:"identifier"`
	EntityType *string `json:"entity_type,omitempty"`
}

// ByIdentifierOut lists the entities found.
type ByIdentifierOut struct {
	Entities []EntityOut `json:"entities"`
	Total    int         `json:"total"`
}

func retrieveEntityByIdentifierTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retrieve_entity_by_identifier",
		title: "Find entity by identifier",
		description: "Find entities by name, email, tax id or another identifier, in all types or one: " +
			"exact match after normalisation (case, punctuation, spacing ignored).",
		toolset: ToolsetEntities, ann: readOnly, budget: BudgetList,
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "identifier"), 512); maxLen(prop(s, "entity_type"), 128) },
	}, func(ctx context.Context, call *Call, in ByIdentifierIn) (ByIdentifierOut, error) {
		typ := ""
		if in.EntityType != nil {
			typ = *in.EntityType
		}
		ents, err := d.Knowledge.EntitiesByIdentifier(ctx, call.Caller(), in.Identifier, typ)
		if err != nil {
			return ByIdentifierOut{}, err
		}
		outs, err := entityOuts(ctx, d, call, ents)
		if err != nil {
			return ByIdentifierOut{}, err
		}
		return ByIdentifierOut{Entities: outs, Total: len(ents)}, nil
	})
}

// --- list_observations ---

// ObservationsIn are the arguments of list_observations.
type ObservationsIn struct {
	EntityID string `json:"entity_id"`
	Limit    *int   `json:"limit,omitempty"`
	Offset   *int   `json:"offset,omitempty"`
}

// ObservationsOut is a page of observations, newest first.
type ObservationsOut struct {
	Observations []ObservationOut `json:"observations"`
	Total        int              `json:"total"`
	Limit        int              `json:"limit"`
	Offset       int              `json:"offset"`
}

func listObservationsTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_observations",
		title:       "List observations",
		description: "List the observations behind an entity's snapshot: what each source said about it and when, newest first.",
		toolset:     ToolsetEntities, ann: readOnly, budget: BudgetList,
		shape: func(s *jsonschema.Schema) { pageShape(s); maxLen(prop(s, "entity_id"), idLimit) },
	}, func(ctx context.Context, call *Call, in ObservationsIn) (ObservationsOut, error) {
		p := page(in.Limit, in.Offset)
		obs, total, _, err := d.Knowledge.Observations(ctx, call.Caller(), in.EntityID, p)
		if err != nil {
			return ObservationsOut{}, err
		}
		return ObservationsOut{Observations: mapSlice(obs, observationOut), Total: total, Limit: p.Limit, Offset: p.Offset}, nil
	})
}

// --- retrieve_field_provenance ---

// FieldProvenanceIn are the arguments of retrieve_field_provenance.
type FieldProvenanceIn struct {
	EntityID string `json:"entity_id"`
	Field    string `json:"field"`
}

// SourceObservationOut is the observation a field's value came from.
type SourceObservationOut struct {
	ID               string  `json:"id"`
	SourceID         string  `json:"source_id"`
	ObservedAt       string  `json:"observed_at"`
	SpecificityScore float64 `json:"specificity_score"`
	SourcePriority   int     `json:"source_priority"`
}

// FieldProvenanceOut traces a field to its source.
type FieldProvenanceOut struct {
	Field             string               `json:"field"`
	Value             any                  `json:"value"`
	SourceObservation SourceObservationOut `json:"source_observation"`
	SourceMaterial    SourceOut            `json:"source_material"`
	ObservedAt        string               `json:"observed_at"`
	// File is set when the value was interpreted from a stored file.
	File *FileOriginOut `json:"file,omitempty"`
}

func retrieveFieldProvenanceTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "retrieve_field_provenance",
		title: "Retrieve field provenance",
		description: "Why an entity's field has its value: the winning observation (priority, specificity) " +
			"and the source material it came from.",
		toolset: ToolsetEntities, ann: readOnly, budget: BudgetSummary,
		// The answer names the source material a value came from.
		requires: reads(consent.ResourceSources),
		shape:    func(s *jsonschema.Schema) { maxLen(prop(s, "entity_id"), idLimit); maxLen(prop(s, "field"), 128) },
	}, func(ctx context.Context, call *Call, in FieldProvenanceIn) (FieldProvenanceOut, error) {
		fp, err := d.Knowledge.FieldProvenance(ctx, call.Caller(), in.EntityID, in.Field)
		if err != nil {
			return FieldProvenanceOut{}, err
		}
		o := fp.Observation
		return FieldProvenanceOut{
			Field: fp.Field, Value: fp.Value,
			SourceObservation: SourceObservationOut{
				ID: o.ID, SourceID: o.SourceID, ObservedAt: ts(o.ObservedAt),
				SpecificityScore: o.SpecificityScore, SourcePriority: o.SourcePriority,
			},
			SourceMaterial: sourceOut(fp.Source),
			ObservedAt:     ts(o.ObservedAt),
			File:           fileOriginOut(fp.Source, o.ID),
		}, nil
	})
}

// --- correct ---

// CorrectIn are the arguments of correct.
type CorrectIn struct {
	UserID     *string `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	EntityID   string  `json:"entity_id"`
	EntityType string  `json:"entity_type" jsonschema:"must be the entity's type"`
	Field      string  `json:"field"`
	Value      any     `json:"value"`
}

// CorrectOut reports the correction.
type CorrectOut struct {
	ObservationID string `json:"observation_id"`
	EntityID      string `json:"entity_id"`
	Field         string `json:"field"`
	Value         any    `json:"value"`
	Message       string `json:"message"`
}

func correctTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "correct",
		title: "Correct a field",
		description: "Set an entity's field by hand: the correction (priority 1000) wins over every extraction, earlier or later, " +
			"until corrected again; repeating it changes nothing.",
		toolset: ToolsetEntities, ann: additive, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "user_id"), idLimit)
			maxLen(prop(s, "entity_id"), idLimit)
			maxLen(prop(s, "entity_type"), 128)
			maxLen(prop(s, "field"), 128)
		},
	}, func(ctx context.Context, call *Call, in CorrectIn) (CorrectOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return CorrectOut{}, err
		}
		res, err := d.Knowledge.Correct(ctx, call.Caller(), knowledge.CorrectRequest{
			EntityID: in.EntityID, EntityType: in.EntityType, Field: in.Field, Value: in.Value,
		})
		if err != nil {
			return CorrectOut{}, err
		}
		msg := "correction recorded; it now wins for this field"
		if res.Unchanged {
			msg = "the field already holds this correction; nothing changed"
		}
		return CorrectOut{ObservationID: res.ObservationID, EntityID: res.EntityID, Field: res.Field, Value: res.Value, Message: msg}, nil
	})
}

// --- merge_entities ---

// MergeIn are the arguments of merge_entities.
type MergeIn struct {
	UserID       *string `json:"user_id,omitempty" jsonschema:"optional; only your own"`
	FromEntityID string  `json:"from_entity_id" jsonschema:"the duplicate"`
	ToEntityID   string  `json:"to_entity_id" jsonschema:"the entity that absorbs it"`
	MergeReason  *string `json:"merge_reason,omitempty"`
}

// MergeOut reports a merge.
type MergeOut struct {
	FromEntityID         string `json:"from_entity_id"`
	ToEntityID           string `json:"to_entity_id"`
	ObservationsMoved    int    `json:"observations_moved"`
	MergedAt             string `json:"merged_at"`
	MergeReason          string `json:"merge_reason,omitempty"`
	RelationshipsMoved   int    `json:"relationships_moved" jsonschema:"relationships re-pointed to the target"`
	RelationshipsDropped int    `json:"relationships_dropped" jsonschema:"relationships ended because moving them would make a self-loop or a cycle"`
}

func mergeEntitiesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "merge_entities",
		title: "Merge duplicate entities",
		description: "Merge a duplicate entity into another of its type: its observations and relationships move to the target; " +
			"reads of the duplicate then answer ENTITY_ALREADY_MERGED naming it.",
		toolset: ToolsetEntities, ann: destroys, budget: BudgetList,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "user_id"), idLimit)
			maxLen(prop(s, "from_entity_id"), idLimit)
			maxLen(prop(s, "to_entity_id"), idLimit)
			maxLen(prop(s, "merge_reason"), 2048)
		},
	}, func(ctx context.Context, call *Call, in MergeIn) (MergeOut, error) {
		if err := checkUserID(call, in.UserID); err != nil {
			return MergeOut{}, err
		}
		reason := ""
		if in.MergeReason != nil {
			reason = *in.MergeReason
		}
		res, err := d.Knowledge.MergeEntities(ctx, call.Caller(), in.FromEntityID, in.ToEntityID, reason)
		if err != nil {
			return MergeOut{}, err
		}
		return MergeOut{
			FromEntityID: res.FromEntityID, ToEntityID: res.ToEntityID, ObservationsMoved: res.ObservationsMoved,
			MergedAt: ts(res.MergedAt), MergeReason: res.Reason,
			RelationshipsMoved: res.RelationshipsMoved, RelationshipsDropped: res.RelationshipsDropped,
		}, nil
	})
}
