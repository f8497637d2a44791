package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
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
// carrying its metadata over as an observation of a merge source.
func (s *Service) moveRelationships(ctx context.Context, tx *graph.Tx, c Caller, from, to string, now time.Time, res *MergeResult) error {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return err
	}
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
			_, err := s.addRelationship(ctx, tx, c, set, RelationshipRequest{
				Type: r.Type, SourceEntityID: src, TargetEntityID: dst, Metadata: r.Metadata,
			}, graph.SourceMerge, now)
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
