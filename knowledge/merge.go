package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// MergeResult reports a merge.
type MergeResult struct {
	FromEntityID      string
	ToEntityID        string
	ObservationsMoved int
	MergedAt          time.Time
	Reason            string
	// RelationshipsMoved counts the edges of the merged entity that now
	// start or end at the target; RelationshipsDropped those that could not
	// move (they would become self-loops or close a cycle) and were ended.
	RelationshipsMoved   int
	RelationshipsDropped int
}

// MergeEntities merges a duplicate into another entity of the same type: its
// observations move to the target, whose snapshot is recomputed; its live
// relationships are ended and recreated on the target; and it is marked as
// merged, so that reads of its id say where it went and later stores of the
// same identity land on the target.
func (s *Service) MergeEntities(ctx context.Context, c Caller, fromID, toID, reason string) (MergeResult, error) {
	if fromID == toID && fromID != "" {
		return MergeResult{}, invalid("to_entity_id", "an entity other than from_entity_id", "the same id", "cannot merge an entity into itself")
	}
	var res MergeResult
	err := s.graph.Update(ctx, func(tx *graph.Tx) error {
		from, err := s.readableEntity(ctx, tx, c, fromID, false)
		if err != nil {
			return err
		}
		to, err := s.readableEntity(ctx, tx, c, toID, false)
		if err != nil {
			return err
		}
		if from.Type != to.Type {
			return invalid("to_entity_id", "an entity of type "+from.Type, to.Type, "cannot merge a %s into a %s", from.Type, to.Type)
		}
		if !c.writable(from.Type) {
			return &ForbiddenError{EntityType: from.Type, Action: "write"}
		}
		if err := tx.LockUser(ctx, c.UserID); err != nil {
			return err
		}
		now := s.clock()
		moved, err := tx.MoveObservations(ctx, c.UserID, from.ID, to.ID)
		if err != nil {
			return err
		}
		if _, err := s.recompute(ctx, tx, c.UserID, to.ID); err != nil {
			return err
		}
		from.MergedInto, from.MergedAt, from.ObservationCount, from.ComputedAt = to.ID, now, 0, now
		if err := tx.PutEntity(ctx, from); err != nil {
			return err
		}
		if err := s.enqueueEmbedding(ctx, tx, c.UserID, from.ID); err != nil {
			return err
		}
		if err := tx.SetIdentifiers(ctx, c.UserID, from.ID, nil); err != nil {
			return err
		}
		if err := tx.ReplaceTimelineEvents(ctx, c.UserID, from.ID, nil); err != nil {
			return err
		}
		res = MergeResult{FromEntityID: from.ID, ToEntityID: to.ID, ObservationsMoved: moved, MergedAt: now, Reason: reason}
		return s.moveRelationships(ctx, tx, c, from.ID, to.ID, now, &res)
	})
	if err != nil {
		return MergeResult{}, fmt.Errorf("knowledge: merge: %w", err)
	}
	return res, nil
}

// moveRelationships ends every live edge of from and recreates it on to,
// carrying its observations over (moveRelationship).
func (s *Service) moveRelationships(ctx context.Context, tx *graph.Tx, c Caller, from, to string, now time.Time, res *MergeResult) error {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return err
	}
	// The types the user registered by using them are types of its
	// relationships too: without them an edge of such a type failed the
	// merge as of an unknown type.
	used, err := s.schemas.RelationshipTypes(ctx, c.UserID)
	if err != nil {
		return err
	}
	set = set.WithUsedRelationshipTypes(used...)
	for {
		rels, _, err := tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: c.UserID, EntityID: from, Page: graph.Page{Limit: 500}})
		if err != nil {
			return err
		}
		if len(rels) == 0 {
			return nil
		}
		for _, r := range rels {
			if _, err := tx.EndRelationship(ctx, c.UserID, r.ID, now); err != nil {
				return err
			}
			src, dst := r.SourceEntityID, r.TargetEntityID
			if src == from {
				src = to
			}
			if dst == from {
				dst = to
			}
			if src == dst {
				// A duplicate's edge to its original means nothing once merged.
				res.RelationshipsDropped++
				continue
			}
			err := s.moveRelationship(ctx, tx, c, set, r, src, dst, now)
			var cycle *graph.CycleError
			switch {
			case err == nil:
				res.RelationshipsMoved++
			case errors.As(err, &cycle):
				res.RelationshipsDropped++
			default:
				return err
			}
		}
	}
}

// moveRelationship creates r again between src and dst (or finds the live
// edge there, which then keeps its own observations too) with a copy of
// each of r's observations: the same source, times, priority, specificity
// and metadata, under an id that names the observation first recorded
// (movedObservationID). Its metadata is then reduced from what counts, as
// any relationship's: each observation keeps its own time and priority
// rather than the merge's, a retraction of the original (kept under its
// id) leaves out every copy, whenever it came, and erasing the source
// erases the copies with the rest of what it said. So a merge and a
// retraction (or its undo) leave the same metadata in either order, and
// two edges that a merge makes one combine as their observations say.
//
// An edge with no observation (written before relationships had them)
// carries its metadata over as one observation of a merge source.
func (s *Service) moveRelationship(ctx context.Context, tx *graph.Tx, c Caller, set *schema.Set, r graph.Relationship, src, dst string, now time.Time) error {
	robs, err := tx.RelationshipObservations(ctx, c.UserID, r.ID)
	if err != nil {
		return err
	}
	if len(robs) == 0 {
		_, err := s.addRelationship(ctx, tx, c, set, RelationshipRequest{
			Type: r.Type, SourceEntityID: src, TargetEntityID: dst, Metadata: r.Metadata,
		}, graph.SourceMerge, now)
		return err
	}
	relType, err := s.checkRelationshipRequest(ctx, tx, c, set, RelationshipRequest{Type: r.Type, SourceEntityID: src, TargetEntityID: dst})
	if err != nil {
		return err
	}
	rel, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
		UserID: c.UserID, Type: r.Type, SourceEntityID: src, TargetEntityID: dst, Now: now, Acyclic: relType.Acyclic,
	})
	if err = s.createError(ctx, tx, c, err); err != nil {
		return err
	}
	for _, o := range robs {
		o.ID, o.RelationshipID, o.CreatedAt = movedObservationID(rootObservationID(o.ID), rel.ID), rel.ID, now
		if err := tx.InsertRelationshipObservation(ctx, o); err != nil && !errors.Is(err, graph.ErrConflict) {
			return err
		}
	}
	_, err = s.reduceRelationship(ctx, tx, rel)
	return err
}
