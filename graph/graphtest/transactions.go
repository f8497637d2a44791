package graphtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// writeEverything writes one row of every kind for user, in tx: a source,
// two entities with identifiers, an observation, a raw fragment, a timeline
// event and a relationship between the entities. Ids end with suffix.
func writeEverything(ctx context.Context, tx *graph.Tx, user, suffix string) error {
	src := newSource(user, "src_"+user+suffix, epoch)
	a, b := "ent_"+user+suffix+"_a", "ent_"+user+suffix+"_b"
	if err := tx.InsertSource(ctx, src); err != nil {
		return fmt.Errorf("insert source: %w", err)
	}
	for _, id := range []string{a, b} {
		if err := tx.PutEntity(ctx, newEntity(user, id, "person", epoch)); err != nil {
			return fmt.Errorf("put entity: %w", err)
		}
		if err := tx.SetIdentifiers(ctx, user, id, []graph.Identifier{{Field: "name", Value: "v" + suffix}}); err != nil {
			return fmt.Errorf("set identifiers: %w", err)
		}
	}
	if err := tx.InsertObservation(ctx, newObservation(user, "obs_"+user+suffix, a, src.ID, 1)); err != nil {
		return fmt.Errorf("insert observation: %w", err)
	}
	if err := tx.InsertRawFragment(ctx, graph.RawFragment{
		ID: "raw_" + user + suffix, UserID: user, SourceID: src.ID, EntityID: a, EntityType: "person",
		Field: "nick", Value: "x", CreatedAt: epoch,
	}); err != nil {
		return fmt.Errorf("insert raw fragment: %w", err)
	}
	if err := tx.ReplaceTimelineEvents(ctx, user, a, []graph.TimelineEvent{
		newEvent(user, "tle_"+user+suffix, a, "born", src.ID, 1),
	}); err != nil {
		return fmt.Errorf("replace timeline events: %w", err)
	}
	if _, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
		UserID: user, Type: graph.PartOf, SourceEntityID: a, TargetEntityID: b, Now: at(epoch, 1),
	}); err != nil {
		return fmt.Errorf("create relationship: %w", err)
	}
	if err := tx.InsertRelationshipObservation(ctx, graph.RelationshipObservation{
		ID: "robs_" + user + suffix, UserID: user, RelationshipID: graph.RelationshipID(graph.PartOf, a, b),
		SourceID: src.ID, ObservedAt: at(epoch, 1), CreatedAt: at(epoch, 1), SourcePriority: 100,
		Metadata: map[string]any{"role": "member"},
	}); err != nil {
		return fmt.Errorf("insert relationship observation: %w", err)
	}
	return nil
}

// countEverything returns how many rows of each kind writeEverything wrote
// are visible to user.
func countEverything(ctx context.Context, tx *graph.Tx, user, suffix string) (map[string]int, error) {
	n := map[string]int{}
	a, b := "ent_"+user+suffix+"_a", "ent_"+user+suffix+"_b"
	present := func(what string, err error) error {
		switch {
		case err == nil:
			n[what]++
		case !errors.Is(err, graph.ErrNotFound):
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	_, err := tx.Source(ctx, user, "src_"+user+suffix)
	if err := present("source", err); err != nil {
		return nil, err
	}
	_, err = tx.Entity(ctx, user, a)
	if err := present("entity", err); err != nil {
		return nil, err
	}
	_, err = tx.Observation(ctx, user, "obs_"+user+suffix)
	if err := present("observation", err); err != nil {
		return nil, err
	}
	_, err = tx.Relationship(ctx, user, graph.RelationshipID(graph.PartOf, a, b))
	if err := present("relationship", err); err != nil {
		return nil, err
	}
	robs, err := tx.RelationshipObservations(ctx, user, graph.RelationshipID(graph.PartOf, a, b))
	if err != nil {
		return nil, err
	}
	n["relationship observations"] = len(robs)
	byID, err := tx.EntitiesByIdentifier(ctx, user, "v"+suffix, "")
	if err != nil {
		return nil, err
	}
	n["identified"] = len(byID)
	_, n["timeline"], err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: user})
	if err != nil {
		return nil, err
	}
	return n, nil
}

func testTransactions(t *testing.T, newStore Harness) {
	s := newStore(t)
	all := map[string]int{"source": 1, "entity": 1, "observation": 1, "relationship": 1, "identified": 2, "timeline": 1,
		"relationship observations": 1}

	t.Run("FailedUpdateLeavesNothing", func(t *testing.T) {
		boom := errors.New("boom")
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := writeEverything(ctx, tx, alice, "_failed"); err != nil {
				return err
			}
			got, err := countEverything(ctx, tx, alice, "_failed")
			if err != nil {
				return err
			}
			if d := diffString(all, got); d != "" {
				t.Errorf("rows seen by the transaction that wrote them (-want +got):\n%s", d)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want the error fn returned", err)
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]int, error) {
			return countEverything(ctx, tx, alice, "_failed")
		})
		diff(t, "rows after a failed update", map[string]int{"identified": 0, "timeline": 0, "relationship observations": 0}, got)
	})

	t.Run("FailedUpdateKeepsOldRows", func(t *testing.T) {
		old := newEntity(alice, "ent_alice_kept", "person", at(epoch, 1))
		putEntities(t, s, old)
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			changed := old
			changed.CanonicalName, changed.ObservationCount = "changed", 9
			if err := tx.PutEntity(ctx, changed); err != nil {
				return err
			}
			return errors.New("boom")
		})
		if err == nil {
			t.Fatal("Update returned nil, want the error fn returned")
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Entity, error) {
			return tx.Entity(ctx, alice, old.ID)
		})
		old.Snapshot = jsonValue(t, old.Snapshot)
		diff(t, "entity after a failed replace", old, got)
	})

	t.Run("ViewSeesCommitted", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx *graph.Tx) error { return writeEverything(ctx, tx, alice, "_ok") })
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]int, error) {
			return countEverything(ctx, tx, alice, "_ok")
		})
		diff(t, "rows after a committed update", all, got)
	})
}
