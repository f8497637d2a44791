package knowledge

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// CorrectRequest overrides one field of an entity.
type CorrectRequest struct {
	EntityID   string
	EntityType string
	Field      string
	Value      any
	// provenance is added to the correction source's provenance, as a
	// confirmed contradiction names itself and the memory it came from.
	provenance map[string]any
}

// CorrectResult reports the correction observation.
type CorrectResult struct {
	ObservationID string
	EntityID      string
	Field         string
	Value         any
	// Unchanged is true when the field already held this correction, in
	// which case no new observation was made.
	Unchanged bool
}

// Correct records a correction: an observation of priority
// CorrectionPriority holding one field, which wins over every extraction,
// earlier or later. Correcting a field to the value a correction already
// gave it is idempotent.
func (s *Service) Correct(ctx context.Context, c Caller, req CorrectRequest) (CorrectResult, error) {
	if req.Value == nil {
		return CorrectResult{}, invalid("value", "a non-null value", "null", "is required")
	}
	if err := s.checkFieldSize("value", req.Value); err != nil {
		return CorrectResult{}, err
	}
	var res CorrectResult
	err := s.graph.Update(ctx, func(tx *graph.Tx) error {
		e, err := s.readableEntity(ctx, tx, c, req.EntityID, false)
		if err != nil {
			return err
		}
		if req.EntityType != e.Type {
			return invalid("entity_type", e.Type, "string", "entity %s is a %s, not a %s", e.ID, e.Type, truncate(req.EntityType, 64))
		}
		if !c.writable(e.Type) {
			return &ForbiddenError{EntityType: e.Type, Action: "write"}
		}
		sc, err := s.schemaFor(ctx, c.UserID, e.Type)
		if err != nil {
			return err
		}
		f, ok := sc.Fields[req.Field]
		if !ok {
			return invalid("field", "one of: "+strings.Join(sc.FieldNames(), ", "), "string",
				"%q is not a field of the %s schema", truncate(req.Field, 64), e.Type)
		}
		value, err := coerceField("value", f.Type, req.Value)
		if err != nil {
			return err
		}
		if prev, ok := e.Provenance[req.Field]; ok {
			o, err := tx.Observation(ctx, c.UserID, prev)
			if err != nil {
				return err
			}
			if o.SourcePriority >= CorrectionPriority && sameJSON(o.Fields[req.Field], value) {
				res = CorrectResult{ObservationID: o.ID, EntityID: e.ID, Field: req.Field, Value: value, Unchanged: true}
				return nil
			}
		}
		now := s.clock()
		content, err := canonicalJSON(map[string]any{
			"entity_id": e.ID, "field": req.Field, "value": value, "corrected_at": now.Format("2006-01-02T15:04:05.000000Z"),
		})
		if err != nil {
			return err
		}
		hash := sha256Hex(content)
		src := graph.Source{
			ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: graph.SourceCorrection,
			MimeType: "application/json", Size: int64(len(content)),
			Provenance: sourceProvenance(req.provenance, c.AgentID), CreatedAt: now,
		}
		if err := tx.InsertSource(ctx, src); err != nil {
			return err
		}
		fields := map[string]any{req.Field: value}
		o := graph.Observation{
			ID: hashID("obs_", src.ID, "0"), UserID: c.UserID, EntityID: e.ID, EntityType: e.Type,
			SchemaVersion: sc.Version, SourceID: src.ID, ObservedAt: now, CreatedAt: now,
			SpecificityScore: specificity(sc, fields), SourcePriority: CorrectionPriority,
			Fields: fields, OriginalEntityID: e.ID,
		}
		if err := tx.InsertObservation(ctx, o); err != nil {
			return err
		}
		if _, err := s.recompute(ctx, tx, c.UserID, e.ID); err != nil {
			return err
		}
		res = CorrectResult{ObservationID: o.ID, EntityID: e.ID, Field: req.Field, Value: value}
		return nil
	})
	if err != nil {
		return CorrectResult{}, fmt.Errorf("knowledge: correct: %w", err)
	}
	return res, nil
}

// sameJSON reports whether two JSON values are equal.
func sameJSON(a, b any) bool {
	ja, err1 := canonicalJSON(a)
	jb, err2 := canonicalJSON(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
