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
	// RelationshipID retracts observations of that relationship:
	// RelationshipObservationIDs, or all of them when it is empty. It
	// goes alone, without ObservationIDs or SourceID.
	RelationshipID             string
	RelationshipObservationIDs []string
	Reason                     string
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
	// Relationships are the relationships reduced again.
	Relationships []string
	// Contradictions are those closed (Retracted) because one of their
	// sides no longer counts, or for Undo opened again: a retraction
	// settles what a contradiction asked about a retracted value.
	Contradictions []string
	At             time.Time
	Undo           bool
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
	if req.RelationshipID != "" || len(req.RelationshipObservationIDs) > 0 {
		return s.retractRelationship(ctx, c, req)
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
	var (
		obs      []graph.Observation
		family   []graph.RelationshipObservation
		relTypes []string
	)
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
		// What it said about relationships counts no more than the rest:
		// a source of an edge the caller may not see is one it may not
		// read, and retracting it needs delete on both ends, as
		// retracting the edge's observations does (and as erasing the
		// source does).
		robs, err := tx.RelationshipObservationsBySource(ctx, c.UserID, req.SourceID)
		if err != nil || len(robs) == 0 {
			return err
		}
		seen, err := seeRelationships(ctx, tx, c, relationshipIDs(robs))
		if err != nil {
			return err
		}
		for _, r := range seen {
			if !r.visible {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: req.SourceID}
			}
			relTypes = append(relTypes, r.types...)
		}
		// With the copies merges made of them (every copy is of the same
		// source) and what they are copies of.
		family, err = relationshipFamilies(ctx, tx, c.UserID, robs)
		return err
	})
	if err != nil {
		return RetractResult{}, fmt.Errorf("knowledge: retract: %w", err)
	}
	for _, o := range obs {
		if err := c.need(Delete, EntityResource(o.EntityType)); err != nil {
			return RetractResult{}, err
		}
	}
	for _, t := range relTypes {
		if err := c.need(Delete, EntityResource(t)); err != nil {
			return RetractResult{}, err
		}
	}
	res := RetractResult{At: s.clock(), Undo: req.Undo, ObservationIDs: []string{}, Entities: []string{}, Relationships: []string{}, Contradictions: []string{}}
	cands := make([]Retraction, len(obs))
	for i, o := range obs {
		cands[i] = Retraction{UserID: c.UserID, ObservationID: o.ID, Kind: RetractObservation, SubjectID: o.EntityID,
			SourceID: o.SourceID, At: res.At, Actor: c.AgentID, Reason: req.Reason}
	}
	cands = append(cands, relationshipRetractions(c, family, res.At, req.Reason)...)
	changed, err := s.applyRetractions(ctx, c, cands, req.Undo, func(tx *graph.Tx, subjects []string) error {
		for _, id := range subjects {
			if slices.ContainsFunc(family, func(o graph.RelationshipObservation) bool { return o.RelationshipID == id }) {
				continue
			}
			if err := s.recomputeOrClear(ctx, tx, c.UserID, id); err != nil {
				return err
			}
		}
		return s.reduceRelationships(ctx, tx, c.UserID, relationshipIDs(family))
	})
	if err != nil {
		return RetractResult{}, err
	}
	for _, r := range changed {
		if r.Kind == RetractRelationshipObservation {
			continue
		}
		res.ObservationIDs = append(res.ObservationIDs, r.ObservationID)
		if !slices.Contains(res.Entities, r.SubjectID) {
			res.Entities = append(res.Entities, r.SubjectID)
		}
	}
	familyResult(&res, family, changed)
	// Every observation asked for, not only those that changed: retracting
	// (or undoing) again settles contradictions a failure left behind.
	ids = make([]string, len(obs))
	for i, o := range obs {
		ids[i] = o.ID
	}
	if res.Contradictions, err = s.settleRetracted(ctx, c, ids, req.Undo, res.At); err != nil {
		return RetractResult{}, fmt.Errorf("knowledge: retract: the observations changed; their contradictions not (retract again): %w", err)
	}
	return res, nil
}

// settleRetracted closes the open contradictions one side of which is one
// of ids, now retracted (Retracted, at, by the caller's agent): each was a
// question about a value that no longer counts. With undo it opens again
// those that a retraction closed and that nothing retracted holds any
// more: neither side a retracted observation, nor a memory that is no
// longer live. It returns the ids of those it closed or opened, about
// entity types the caller may read.
func (s *Service) settleRetracted(ctx context.Context, c Caller, ids []string, undo bool, at time.Time) ([]string, error) {
	out := []string{}
	if len(ids) == 0 {
		return out, nil
	}
	if !undo {
		closed, err := s.contradictions.CloseRetracted(ctx, c.UserID, ids, at, c.AgentID)
		for _, ct := range closed {
			if c.readable(ct.EntityType) {
				out = append(out, ct.ID)
			}
		}
		return out, err
	}
	cs, err := s.contradictions.RetractedContradictions(ctx, c.UserID, ids)
	if err != nil || len(cs) == 0 {
		return out, err
	}
	var mems []string
	for _, ct := range cs {
		if ct.FromMemory() {
			mems = append(mems, ct.NewObservationID)
		}
	}
	live := map[string]bool{}
	if len(mems) > 0 && s.memories != nil {
		ms, err := s.memories.Get(ctx, c.UserID, mems)
		if err != nil {
			return out, memoryError(err)
		}
		for _, m := range ms {
			live[m.ID] = true
		}
	}
	var reopen []string
	types := map[string]string{}
	for _, ct := range cs {
		if !ct.FromMemory() || live[ct.NewObservationID] {
			reopen = append(reopen, ct.ID)
			types[ct.ID] = ct.EntityType
		}
	}
	if len(reopen) == 0 {
		return out, nil
	}
	opened, err := s.contradictions.ReopenRetracted(ctx, c.UserID, reopen)
	for _, id := range opened {
		if c.readable(types[id]) {
			out = append(out, id)
		}
	}
	return out, err
}

// applyRetractions records (or, with undo, removes) the retractions of
// cands that change anything: those of observations not retracted yet
// (or, to undo, retracted), and then has recompute compute their subjects
// again in one graph transaction. The record comes first, so that the
// reducer leaves the observations out; a failure to recompute takes it
// back. It returns the retractions that changed.
func (s *Service) applyRetractions(ctx context.Context, c Caller, cands []Retraction, undo bool, recompute func(tx *graph.Tx, subjects []string) error) ([]Retraction, error) {
	ids := make([]string, len(cands))
	for i, r := range cands {
		ids[i] = r.ObservationID
	}
	prior, err := s.forget.Retractions(ctx, c.UserID, ids)
	if err != nil {
		return nil, err
	}
	retracted := map[string]bool{}
	for _, r := range prior {
		retracted[r.ObservationID] = true
	}
	var changed []Retraction
	var changedIDs, subjects []string
	for _, r := range cands {
		if retracted[r.ObservationID] == undo {
			changed = append(changed, r)
			changedIDs = append(changedIDs, r.ObservationID)
			if !slices.Contains(subjects, r.SubjectID) {
				subjects = append(subjects, r.SubjectID)
			}
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	takeBack := func() error { _, err := s.forget.Retract(ctx, changed); return err }
	if undo {
		_, err = s.forget.Unretract(ctx, c.UserID, changedIDs)
	} else {
		_, err = s.forget.Retract(ctx, changed)
		takeBack = func() error { _, err := s.forget.Unretract(ctx, c.UserID, changedIDs); return err }
	}
	if err != nil {
		return nil, fmt.Errorf("knowledge: retract: %w", err)
	}
	if err := s.graph.Update(ctx, func(tx *graph.Tx) error { return recompute(tx, subjects) }); err != nil {
		if terr := takeBack(); terr != nil {
			s.log.Warn("retraction not taken back after a failed recompute", "err", terr)
		}
		return nil, fmt.Errorf("knowledge: retract: %w", err)
	}
	return changed, nil
}

// retractRelationship retracts observations of one relationship (all of
// them when none are named), or with undo makes them count again; its
// metadata is reduced again from those that count.
func (s *Service) retractRelationship(ctx context.Context, c Caller, req RetractRequest) (RetractResult, error) {
	if len(req.ObservationIDs) > 0 || req.SourceID != "" {
		return RetractResult{}, invalid("relationship_id", "relationship_id alone, or observation_ids / source_id", "both", "a relationship's observations are retracted on their own")
	}
	if err := checkID("relationship_id", req.RelationshipID); err != nil {
		return RetractResult{}, err
	}
	var (
		rel    graph.Relationship
		robs   []graph.RelationshipObservation
		family []graph.RelationshipObservation
		types  []string
	)
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		rel, err = tx.Relationship(ctx, c.UserID, req.RelationshipID)
		if graph.IsNotFound(err) {
			return &NotFoundError{Kind: ErrRelationshipNotFound, ID: req.RelationshipID}
		}
		if err != nil {
			return err
		}
		ends, err := tx.Entities(ctx, c.UserID, []string{rel.SourceEntityID, rel.TargetEntityID})
		if err != nil {
			return err
		}
		for _, e := range ends {
			if !c.readable(e.Type) {
				return &NotFoundError{Kind: ErrRelationshipNotFound, ID: req.RelationshipID}
			}
			types = append(types, e.Type)
		}
		if robs, err = tx.RelationshipObservations(ctx, c.UserID, rel.ID); err != nil {
			return err
		}
		// The observations named, with the copies merges made of them
		// (moveRelationship) and the observations they are copies of:
		// one retraction, under the root's id, takes them all out,
		// whichever relationship the caller names. (A merge joins
		// entities of one type: every copy's ends are of the types of
		// the named relationship's.)
		var named []graph.RelationshipObservation
		for _, o := range robs {
			if len(req.RelationshipObservationIDs) == 0 || slices.Contains(req.RelationshipObservationIDs, o.ID) {
				named = append(named, o)
			}
		}
		family, err = relationshipFamilies(ctx, tx, c.UserID, named)
		return err
	})
	if err != nil {
		return RetractResult{}, fmt.Errorf("knowledge: retract: %w", err)
	}
	for _, t := range types {
		if err := c.need(Delete, EntityResource(t)); err != nil {
			return RetractResult{}, err
		}
	}
	for _, id := range req.RelationshipObservationIDs {
		if !slices.ContainsFunc(robs, func(o graph.RelationshipObservation) bool { return o.ID == id }) {
			return RetractResult{}, &NotFoundError{Kind: ErrObservationNotFound, ID: id}
		}
	}
	res := RetractResult{At: s.clock(), Undo: req.Undo, ObservationIDs: []string{}, Entities: []string{}, Relationships: []string{}, Contradictions: []string{}}
	changed, err := s.applyRetractions(ctx, c, relationshipRetractions(c, family, res.At, req.Reason), req.Undo, func(tx *graph.Tx, _ []string) error {
		return s.reduceRelationships(ctx, tx, c.UserID, relationshipIDs(family))
	})
	if err != nil {
		return RetractResult{}, err
	}
	familyResult(&res, family, changed)
	return res, nil
}

// countedRelationship returns the relationship observations of robs that
// count: those no retraction took out. A copy that a merge made
// (movedObservationID) counts as its root does: a retraction is kept
// under the root's id.
func (s *Service) countedRelationship(ctx context.Context, userID string, robs []graph.RelationshipObservation) ([]graph.RelationshipObservation, error) {
	if s.contradictions == nil || len(robs) == 0 {
		return robs, nil
	}
	ids := make([]string, 0, len(robs))
	for _, o := range robs {
		ids = append(ids, o.ID)
		if root := rootObservationID(o.ID); root != o.ID && !slices.Contains(ids, root) {
			ids = append(ids, root)
		}
	}
	out, err := s.contradictions.RejectedObservations(ctx, userID, ids)
	if err != nil || len(out) == 0 {
		return robs, err
	}
	return slices.DeleteFunc(slices.Clone(robs), func(o graph.RelationshipObservation) bool {
		return out[o.ID] || out[rootObservationID(o.ID)]
	}), nil
}

// relationshipFamilies returns, for relationship observations, every
// observation of the user that is one of them or a copy a merge made of
// the same root (movedObservationID), wherever it is: the root and its
// copies share their source, so the source's relationship observations
// hold them all.
func relationshipFamilies(ctx context.Context, tx *graph.Tx, userID string, robs []graph.RelationshipObservation) ([]graph.RelationshipObservation, error) {
	roots := map[string]bool{}
	var sources []string
	for _, o := range robs {
		roots[rootObservationID(o.ID)] = true
		if !slices.Contains(sources, o.SourceID) {
			sources = append(sources, o.SourceID)
		}
	}
	var out []graph.RelationshipObservation
	for _, src := range sources {
		all, err := tx.RelationshipObservationsBySource(ctx, userID, src)
		if err != nil {
			return nil, err
		}
		for _, o := range all {
			if roots[rootObservationID(o.ID)] && !slices.ContainsFunc(out, func(p graph.RelationshipObservation) bool { return p.ID == o.ID }) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// relationshipRetractions are the retractions of the roots of family (an
// observation and the copies merges made of it are retracted as one,
// under the root's id), each naming the relationship its root is about
// (or, for a root no longer stored, the first copy's).
func relationshipRetractions(c Caller, family []graph.RelationshipObservation, at time.Time, reason string) []Retraction {
	var out []Retraction
	for _, o := range family {
		root := rootObservationID(o.ID)
		r := Retraction{UserID: c.UserID, ObservationID: root, Kind: RetractRelationshipObservation,
			SubjectID: o.RelationshipID, SourceID: o.SourceID, At: at, Actor: c.AgentID, Reason: reason}
		switch i := slices.IndexFunc(out, func(p Retraction) bool { return p.ObservationID == root }); {
		case i < 0:
			out = append(out, r)
		case o.ID == root:
			out[i] = r
		}
	}
	return out
}

// reduceRelationships reduces again the newest period of each of ids.
func (s *Service) reduceRelationships(ctx context.Context, tx *graph.Tx, userID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rels, err := tx.Relationships(ctx, userID, ids)
	if err != nil {
		return err
	}
	for _, r := range rels {
		if _, err := s.reduceRelationship(ctx, tx, r); err != nil {
			return err
		}
	}
	return nil
}

// familyResult adds to res the observations of family whose root changed
// and the relationships they are about.
func familyResult(res *RetractResult, family []graph.RelationshipObservation, changed []Retraction) {
	for _, o := range family {
		if !slices.ContainsFunc(changed, func(r Retraction) bool { return r.ObservationID == rootObservationID(o.ID) }) {
			continue
		}
		res.ObservationIDs = append(res.ObservationIDs, o.ID)
		if !slices.Contains(res.Relationships, o.RelationshipID) {
			res.Relationships = append(res.Relationships, o.RelationshipID)
		}
	}
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
