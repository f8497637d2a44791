package graphtest

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// sameAbsence fails the test unless both errors say not found, in the same
// way: reading another user's row must look exactly like reading a missing
// one.
func sameAbsence(t *testing.T, what string, otherUsers, missing error) {
	t.Helper()
	wantNotFound(t, what+" of another user's id", otherUsers)
	wantNotFound(t, what+" of a missing id", missing)
	var a, b *graph.NotFoundError
	if errors.As(otherUsers, &a) != errors.As(missing, &b) || (a != nil && b != nil && a.What != b.What) {
		t.Errorf("%s: another user's id gives %v, a missing one %v: want the same kind of error", what, otherUsers, missing)
	}
}

// idsOf maps rows to their ids.
func idsOf[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func testIsolation(t *testing.T, newStore Harness) {
	s := newStore(t)
	update(t, s, func(ctx context.Context, tx *graph.Tx) error { return writeEverything(ctx, tx, alice, "") })
	update(t, s, func(ctx context.Context, tx *graph.Tx) error { return writeEverything(ctx, tx, bob, "") })
	const aliceA, aliceB, bobA, bobB = "ent_alice_a", "ent_alice_b", "ent_bob_a", "ent_bob_b"
	aliceRel, bobRel := graph.RelationshipID(graph.PartOf, aliceA, aliceB), graph.RelationshipID(graph.PartOf, bobA, bobB)
	aliceHash := newSource(alice, "src_alice", epoch).ContentHash

	// absent runs read as bob with alice's id and with a missing one.
	absent := func(t *testing.T, what, aliceID, missingID string, read func(ctx context.Context, tx *graph.Tx, id string) error) {
		t.Helper()
		other := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error { return read(ctx, tx, aliceID) })
		missing := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error { return read(ctx, tx, missingID) })
		sameAbsence(t, what, other, missing)
	}

	t.Run("ByID", func(t *testing.T) {
		absent(t, "Source", "src_alice", "src_missing", func(ctx context.Context, tx *graph.Tx, id string) error {
			_, err := tx.Source(ctx, bob, id)
			return err
		})
		absent(t, "SourceByHash", aliceHash, "0badc0de", func(ctx context.Context, tx *graph.Tx, h string) error {
			_, err := tx.SourceByHash(ctx, bob, h)
			return err
		})
		absent(t, "Entity", aliceA, "ent_missing", func(ctx context.Context, tx *graph.Tx, id string) error {
			_, err := tx.Entity(ctx, bob, id)
			return err
		})
		absent(t, "Observation", "obs_alice", "obs_missing", func(ctx context.Context, tx *graph.Tx, id string) error {
			_, err := tx.Observation(ctx, bob, id)
			return err
		})
		absent(t, "Relationship", aliceRel, "rel_missing", func(ctx context.Context, tx *graph.Tx, id string) error {
			_, err := tx.Relationship(ctx, bob, id)
			return err
		})
		absent(t, "Traverse", aliceA, "ent_missing", func(ctx context.Context, tx *graph.Tx, id string) error {
			_, err := tx.Traverse(ctx, graph.TraverseQuery{UserID: bob, Start: id, MaxHops: 2})
			return err
		})
	})

	t.Run("Lists", func(t *testing.T) {
		type listing struct {
			Entities, ListEntities, ByIdentifier            []string
			Counts                                          map[string]int
			Observations, AllObservations, BySource         []string
			Timeline, TimelineOfAlice                       []string
			Relationships, RelationshipsOfAlice, AllEdges   []string
			AliceEdges, RelationshipObservations            []string
			Path                                            []string
			Traverse                                        []string
			ObservationsTotal, TimelineTotal, EntitiesTotal int
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (listing, error) {
			var l listing
			es, err := tx.Entities(ctx, bob, []string{aliceA, bobA, aliceB, bobB})
			if err != nil {
				return l, err
			}
			l.Entities = entityIDs(es)
			if es, l.EntitiesTotal, err = tx.ListEntities(ctx, graph.EntityFilter{UserID: bob, IncludeMerged: true}); err != nil {
				return l, err
			}
			l.ListEntities = entityIDs(es)
			if es, err = tx.EntitiesByIdentifier(ctx, bob, "v", ""); err != nil {
				return l, err
			}
			l.ByIdentifier = entityIDs(es)
			if l.Counts, err = tx.EntityTypeCounts(ctx, bob); err != nil {
				return l, err
			}
			obs, total, err := tx.Observations(ctx, bob, aliceA, graph.Page{})
			if err != nil {
				return l, err
			}
			l.Observations, l.ObservationsTotal = observationIDs(obs), total
			if obs, err = tx.AllObservations(ctx, bob, aliceA); err != nil {
				return l, err
			}
			l.AllObservations = observationIDs(obs)
			if obs, err = tx.ObservationsBySource(ctx, bob, "src_alice"); err != nil {
				return l, err
			}
			l.BySource = observationIDs(obs)
			evID := func(e graph.TimelineEvent) string { return e.ID }
			evs, total, err := tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: bob})
			if err != nil {
				return l, err
			}
			l.Timeline, l.TimelineTotal = idsOf(evs, evID), total
			if evs, _, err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: bob, EntityID: aliceA}); err != nil {
				return l, err
			}
			l.TimelineOfAlice = idsOf(evs, evID)
			relID := func(r graph.Relationship) string { return r.ID }
			rels, _, err := tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: bob, EntityID: bobA})
			if err != nil {
				return l, err
			}
			l.Relationships = idsOf(rels, relID)
			if rels, _, err = tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: bob, EntityID: aliceA}); err != nil {
				return l, err
			}
			l.RelationshipsOfAlice = idsOf(rels, relID)
			edgeID := func(e graph.Edge) string { return e.ID }
			edges, err := tx.Edges(ctx, graph.EdgeQuery{UserID: bob, EntityIDs: []string{aliceA, aliceB, bobA, bobB}, Direction: graph.Both})
			if err != nil {
				return l, err
			}
			l.AllEdges = idsOf(edges, edgeID)
			if edges, err = tx.Edges(ctx, graph.EdgeQuery{UserID: bob, EntityIDs: []string{aliceA}, Direction: graph.Both}); err != nil {
				return l, err
			}
			l.AliceEdges = idsOf(edges, edgeID)
			robs, err := tx.RelationshipObservations(ctx, bob, aliceRel)
			if err != nil {
				return l, err
			}
			l.RelationshipObservations = idsOf(robs, func(o graph.RelationshipObservation) string { return o.ID })
			if l.Path, err = tx.ShortestPath(ctx, graph.PathQuery{UserID: bob, From: aliceA, To: aliceB}); err != nil {
				return l, err
			}
			res, err := tx.Traverse(ctx, graph.TraverseQuery{UserID: bob, Start: bobA, MaxHops: 3})
			if err != nil {
				return l, err
			}
			l.Traverse = idsOf(res.Entities, func(r graph.Reached) string { return r.EntityID })
			return l, nil
		})
		want := listing{
			Entities: []string{bobA, bobB}, ListEntities: []string{bobA, bobB}, EntitiesTotal: 2,
			ByIdentifier: []string{bobA, bobB}, Counts: map[string]int{"person": 2},
			Timeline: []string{"tle_bob"}, TimelineTotal: 1,
			Relationships: []string{bobRel}, AllEdges: []string{bobRel}, Traverse: []string{bobB},
		}
		diff(t, "bob's reads", want, got)
	})

	t.Run("Writes", func(t *testing.T) {
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.EndRelationship(ctx, bob, aliceRel, at(epoch, 5))
			return err
		})
		wantNotFound(t, "bob ends alice's relationship", err)
		for _, ends := range [][2]string{{aliceA, aliceB}, {bobA, aliceB}, {aliceA, bobB}} {
			err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
				_, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
					UserID: bob, Type: graph.RefersTo, SourceEntityID: ends[0], TargetEntityID: ends[1],
				})
				return err
			})
			missing := ends[0]
			if missing == bobA {
				missing = ends[1]
			}
			wantNotFoundError(t, "bob links "+ends[0]+" to "+ends[1], err, missing)
		}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if n, err := tx.MoveObservations(ctx, bob, aliceA, bobA); err != nil || n != 0 {
				t.Errorf("bob moves alice's observations: moved %d, err %v; want 0, nil", n, err)
			}
			if err := tx.ReplaceTimelineEvents(ctx, bob, aliceA, nil); err != nil {
				return err
			}
			return tx.SetIdentifiers(ctx, bob, aliceA, nil)
		})
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]int, error) {
			return countEverything(ctx, tx, alice, "")
		})
		diff(t, "alice's rows after bob's writes", map[string]int{
			"source": 1, "entity": 1, "observation": 1, "relationship": 1, "identified": 2, "timeline": 1,
			"relationship observations": 1,
		}, got)
	})
}
