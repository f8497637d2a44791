package knowledge

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// Retracting observations (issue 37, docs/forgetting.md): an observation
// that was wrong stops counting. It stays recorded (list_observations
// still shows it), with a retraction saying who retracted it, when and
// why; the snapshots of the entities it is about are computed again
// without it, so the next observation of each field wins and provenance
// names that one. Undoing a retraction makes it count again.

// The kinds of Retraction.
const (
	RetractObservation             = "observation"
	RetractRelationshipObservation = "relationship_observation"
)

// RetractRequest retracts observations: those named, and every observation
// of SourceID when it is set.
type RetractRequest struct {
	ObservationIDs []string
	SourceID       string
	Reason         string
	// Undo makes retracted observations count again.
	Undo bool
}

// RetractResult says what Retract changed.
type RetractResult struct {
	// ObservationIDs are the observations retracted now (or, for Undo,
	// counting again); those retracted already (or not retracted) are left
	// out.
	ObservationIDs []string
	// Entities are the entities computed again.
	Entities []string
	At       time.Time
	Undo     bool
}

// Retract retracts observations, or with Undo makes them count again, all
// or none. Every observation (and the source) must be about entity types
// the caller may read (else a NotFoundError and nothing changes), and the
// caller needs delete on each of those types.
func (s *Service) Retract(ctx context.Context, c Caller, req RetractRequest) (RetractResult, error) {
	if s.forget == nil || s.contradictions == nil {
		return RetractResult{}, unavailable("retract (no retraction store)")
	}
	if err := checkReason(req.Reason); err != nil {
		return RetractResult{}, err
	}
	var ids []string
	for i, id := range req.ObservationIDs {
		if err := checkID(fmt.Sprintf("observation_ids[%d]", i), id); err != nil {
			return RetractResult{}, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 && req.SourceID == "" {
		return RetractResult{}, invalid("observation_ids", "observation ids or a source_id", "none", "nothing to retract")
	}
	if len(ids) > MaxEraseBatch {
		return RetractResult{}, invalid("observation_ids", fmt.Sprintf("1 to %d ids", MaxEraseBatch), fmt.Sprintf("%d ids", len(ids)), "too many ids")
	}
	var obs []graph.Observation
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		found, err := tx.ObservationsByID(ctx, c.UserID, ids)
		if err != nil {
			return err
		}
		if len(found) < len(ids) {
			for _, id := range ids {
				if !slices.ContainsFunc(found, func(o graph.Observation) bool { return o.ID == id }) {
					return &NotFoundError{Kind: ErrObservationNotFound, ID: id}
				}
			}
		}
		for _, o := range found {
			if !c.readable(o.EntityType) {
				return &NotFoundError{Kind: ErrObservationNotFound, ID: o.ID}
			}
		}
		obs = found
		if req.SourceID == "" {
			return nil
		}
		if err := checkID("source_id", req.SourceID); err != nil {
			return err
		}
		if _, err := tx.Source(ctx, c.UserID, req.SourceID); graph.IsNotFound(err) {
			return &NotFoundError{Kind: ErrSourceNotFound, ID: req.SourceID}
		} else if err != nil {
			return err
		}
		bySource, err := tx.ObservationsBySource(ctx, c.UserID, req.SourceID)
		if err != nil {
			return err
		}
		for _, o := range bySource {
			if !c.readable(o.EntityType) {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: req.SourceID}
			}
			if !slices.ContainsFunc(obs, func(p graph.Observation) bool { return p.ID == o.ID }) {
				obs = append(obs, o)
			}
		}
		return nil
	})
	if err != nil {
		return RetractResult{}, fmt.Errorf("knowledge: retract: %w", err)
	}
	for _, o := range obs {
		if err := c.need(Delete, EntityResource(o.EntityType)); err != nil {
			return RetractResult{}, err
		}
	}
	res := RetractResult{At: s.clock(), Undo: req.Undo, ObservationIDs: []string{}, Entities: []string{}}
	obsIDs := make([]string, len(obs))
	for i, o := range obs {
		obsIDs[i] = o.ID
	}
	// Which of them change: those not retracted yet (or, to undo, those
	// retracted).
	prior, err := s.forget.Retractions(ctx, c.UserID, obsIDs)
	if err != nil {
		return RetractResult{}, err
	}
	retracted := map[string]bool{}
	for _, r := range prior {
		retracted[r.ObservationID] = true
	}
	var changed []graph.Observation
	for _, o := range obs {
		if retracted[o.ID] == req.Undo {
			changed = append(changed, o)
		}
	}
	if len(changed) == 0 {
		return res, nil
	}
	changedIDs := make([]string, len(changed))
	rs := make([]Retraction, len(changed))
	for i, o := range changed {
		changedIDs[i] = o.ID
		rs[i] = Retraction{UserID: c.UserID, ObservationID: o.ID, Kind: RetractObservation, SubjectID: o.EntityID,
			SourceID: o.SourceID, At: res.At, Actor: c.AgentID, Reason: req.Reason}
	}
	// The retraction is recorded first, so that the reducer leaves the
	// observations out; a failure to recompute takes it back.
	undo := func() error { _, err := s.forget.Retract(ctx, rs); return err }
	if req.Undo {
		_, err = s.forget.Unretract(ctx, c.UserID, changedIDs)
	} else {
		_, err = s.forget.Retract(ctx, rs)
		undo = func() error { _, err := s.forget.Unretract(ctx, c.UserID, changedIDs); return err }
	}
	if err != nil {
		return RetractResult{}, fmt.Errorf("knowledge: retract: %w", err)
	}
	var entities []string
	for _, o := range changed {
		if !slices.Contains(entities, o.EntityID) {
			entities = append(entities, o.EntityID)
		}
	}
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		for _, id := range entities {
			if err := s.recomputeOrClear(ctx, tx, c.UserID, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if uerr := undo(); uerr != nil {
			s.log.Warn("retraction not taken back after a failed recompute", "err", uerr)
		}
		return RetractResult{}, fmt.Errorf("knowledge: retract: %w", err)
	}
	res.ObservationIDs, res.Entities = changedIDs, entities
	return res, nil
}

// recomputeOrClear computes an entity again from the observations that
// count; one left with none keeps its row, with no snapshot, provenance,
// identifiers or timeline (what recompute would leave as it was).
func (s *Service) recomputeOrClear(ctx context.Context, tx *graph.Tx, userID, id string) error {
	e, err := s.recompute(ctx, tx, userID, id)
	if err != nil {
		return err
	}
	obs, err := tx.AllObservations(ctx, userID, id)
	if err != nil {
		return err
	}
	if obs, err = s.counted(ctx, userID, obs); err != nil || len(obs) > 0 || e.ID == "" || e.Merged() {
		return err
	}
	sc, err := s.schemaFor(ctx, userID, e.Type)
	if err != nil {
		return err
	}
	e.Snapshot, e.Provenance, e.ObservationCount, e.ComputedAt = map[string]any{}, map[string]string{}, 0, s.clock()
	e.CanonicalName = canonicalName(sc, e.Snapshot, e.ID)
	if err := tx.PutEntity(ctx, e); err != nil {
		return err
	}
	if err := tx.SetIdentifiers(ctx, userID, id, nil); err != nil {
		return err
	}
	if err := tx.ReplaceTimelineEvents(ctx, userID, id, nil); err != nil {
		return err
	}
	return s.enqueueEmbedding(ctx, tx, userID, id)
}

// countedAt is counted as of a time: an observation retracted after at
// still counted then, so an as-of read of an earlier time shows it.
func (s *Service) countedAt(ctx context.Context, userID string, obs []graph.Observation, at time.Time) ([]graph.Observation, error) {
	out, err := s.counted(ctx, userID, obs)
	if err != nil || s.forget == nil || len(out) == len(obs) {
		return out, err
	}
	var left []string
	for _, o := range obs {
		if !slices.ContainsFunc(out, func(k graph.Observation) bool { return k.ID == o.ID }) {
			left = append(left, o.ID)
		}
	}
	rs, err := s.forget.Retractions(ctx, userID, left)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if !r.At.After(at) {
			continue
		}
		if i := slices.IndexFunc(obs, func(o graph.Observation) bool { return o.ID == r.ObservationID }); i >= 0 {
			out = append(out, obs[i])
		}
	}
	return out, nil
}
