package graphtest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// newObservation returns an observation of user with every field set.
func newObservation(user, id, entityID, sourceID string, observedSec int) graph.Observation {
	return graph.Observation{
		ID: id, UserID: user, EntityID: entityID, EntityType: "person", SchemaVersion: "1.0",
		SourceID: sourceID, ObservedAt: at(epoch, observedSec), CreatedAt: at(epoch, 100+observedSec),
		SpecificityScore: 0.75, SourcePriority: 100,
		Fields:           map[string]any{"name": "Ada", "age": 36, "score": 2.5, "tags": []any{"a", 1}},
		OriginalEntityID: entityID,
	}
}

func insertObservations(t *testing.T, s *graph.Store, obs ...graph.Observation) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		for _, o := range obs {
			if err := tx.InsertObservation(ctx, o); err != nil {
				return fmt.Errorf("insert observation %s: %w", o.ID, err)
			}
		}
		return nil
	})
}

// observationIDs returns the ids of obs in order.
func observationIDs(obs []graph.Observation) []string {
	ids := make([]string, len(obs))
	for i, o := range obs {
		ids[i] = o.ID
	}
	return ids
}

func testObservations(t *testing.T, newStore Harness) {
	s := newStore(t)
	const e1, e2, e3, e4 = "ent_alice_1", "ent_alice_2", "ent_alice_3", "ent_alice_4"
	const src1, src2 = "src_alice_1", "src_alice_2"
	putSources(t, s, newSource(alice, src1, epoch), newSource(alice, src2, epoch))
	putEntities(t, s,
		newEntity(alice, e1, "person", epoch), newEntity(alice, e2, "person", epoch),
		newEntity(alice, e3, "person", epoch), newEntity(alice, e4, "person", epoch))
	o1 := newObservation(alice, "obs_alice_1", e1, src2, 5)
	o1.SourcePriority, o1.SpecificityScore, o1.SchemaVersion = 1000, 0.5, "2.1"
	obs := []graph.Observation{
		newObservation(alice, "obs_alice_3", e1, src1, 5),
		o1,
		newObservation(alice, "obs_alice_2", e1, src1, 9),
		newObservation(alice, "obs_alice_4", e1, src2, 1),
		newObservation(alice, "obs_alice_5", e2, src1, 3),
	}
	insertObservations(t, s, obs...)
	want := map[string]graph.Observation{}
	for _, o := range obs {
		o.Fields = jsonValue(t, o.Fields)
		want[o.ID] = o
	}
	wantRows := func(ids ...string) []graph.Observation {
		out := make([]graph.Observation, len(ids))
		for i, id := range ids {
			out[i] = want[id]
		}
		return out
	}

	t.Run("Observation", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Observation, error) {
			return tx.Observation(ctx, alice, o1.ID)
		})
		diff(t, "Observation", want[o1.ID], got)
		err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Observation(ctx, alice, "obs_alice_missing")
			return err
		})
		wantNotFound(t, "Observation of a missing id", err)
	})

	t.Run("Observations", func(t *testing.T) {
		tests := []struct {
			name      string
			entity    string
			page      graph.Page
			want      []string
			wantTotal int
		}{
			{"All", e1, graph.Page{}, []string{"obs_alice_2", "obs_alice_1", "obs_alice_3", "obs_alice_4"}, 4},
			{"FirstPage", e1, graph.Page{Limit: 2}, []string{"obs_alice_2", "obs_alice_1"}, 4},
			{"MiddlePage", e1, graph.Page{Limit: 2, Offset: 1}, []string{"obs_alice_1", "obs_alice_3"}, 4},
			{"PastTheEnd", e1, graph.Page{Limit: 2, Offset: 4}, nil, 4},
			{"OtherEntity", e2, graph.Page{}, []string{"obs_alice_5"}, 1},
			{"NoObservations", e3, graph.Page{}, nil, 0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Observation], error) {
					return listed(tx.Observations(ctx, alice, tc.entity, tc.page))
				})
				diff(t, "Observations", wantRows(tc.want...), got.Rows)
				if got.Total != tc.wantTotal {
					t.Errorf("Observations total = %d, want %d", got.Total, tc.wantTotal)
				}
			})
		}
	})

	t.Run("AllObservations", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Observation, error) {
			return tx.AllObservations(ctx, alice, e1)
		})
		slices.SortFunc(got, func(a, b graph.Observation) int { return cmp.Compare(a.ID, b.ID) })
		diff(t, "AllObservations", wantRows("obs_alice_1", "obs_alice_2", "obs_alice_3", "obs_alice_4"), got)
	})

	t.Run("ObservationsBySource", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Observation, error) {
			return tx.ObservationsBySource(ctx, alice, src1)
		})
		diff(t, "ObservationsBySource", wantRows("obs_alice_2", "obs_alice_3", "obs_alice_5"), got)
	})

	t.Run("DuplicateID", func(t *testing.T) {
		again := newObservation(alice, o1.ID, e2, src1, 50)
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertObservation(ctx, again) })
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertObservation of an existing id: err = %v, want graph.ErrConflict", err)
		}
	})

	t.Run("RawFragments", func(t *testing.T) {
		f := graph.RawFragment{
			ID: "raw_alice_1", UserID: alice, SourceID: src1, EntityID: e1, EntityType: "person",
			Field: "nickname", Value: map[string]any{"v": "Countess", "n": 3}, CreatedAt: at(epoch, 1),
		}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRawFragment(ctx, f) })
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRawFragment(ctx, f) })
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertRawFragment of an existing id: err = %v, want graph.ErrConflict", err)
		}
		// A user-defined type's fragments, and another user's, which
		// alice's reads never return.
		more := []graph.RawFragment{
			{ID: "raw_alice_3", UserID: alice, SourceID: src2, EntityID: e2, EntityType: "recipe", Field: "servings", Value: json.Number("4"), CreatedAt: at(epoch, 2)},
			{ID: "raw_alice_2", UserID: alice, SourceID: src1, EntityID: e1, EntityType: "recipe", Field: "cuisine", Value: "thai", CreatedAt: at(epoch, 3)},
		}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRawFragments(ctx, more) })
		putSources(t, s, newSource(bob, "src_bob_raw", epoch))
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			return tx.InsertRawFragment(ctx, graph.RawFragment{ID: "raw_bob_1", UserID: bob, SourceID: "src_bob_raw", EntityID: "ent_bob_1",
				EntityType: "recipe", Field: "cuisine", Value: "french", CreatedAt: at(epoch, 1)})
		})
		frags := func(q graph.RawFragmentQuery) []string {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RawFragment, error) { return tx.RawFragments(ctx, q) })
			ids := []string{}
			for _, g := range got {
				ids = append(ids, g.ID)
			}
			return ids
		}
		diff(t, "RawFragments of every type", []string{"raw_alice_1", "raw_alice_2", "raw_alice_3"}, frags(graph.RawFragmentQuery{UserID: alice}))
		diff(t, "RawFragments of recipe", []string{"raw_alice_2", "raw_alice_3"}, frags(graph.RawFragmentQuery{UserID: alice, EntityType: "recipe"}))
		diff(t, "RawFragments of an entity", []string{"raw_alice_1", "raw_alice_2"}, frags(graph.RawFragmentQuery{UserID: alice, EntityIDs: []string{e1}}))
		diff(t, "RawFragments of no entity", []string{}, frags(graph.RawFragmentQuery{UserID: alice, EntityIDs: []string{}}))
		diff(t, "RawFragments of bob", []string{"raw_bob_1"}, frags(graph.RawFragmentQuery{UserID: bob, EntityType: "recipe"}))
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RawFragment, error) {
			return tx.RawFragments(ctx, graph.RawFragmentQuery{UserID: alice, EntityType: "person"})
		})
		diff(t, "RawFragments read back", []graph.RawFragment{{ID: f.ID, UserID: alice, SourceID: src1, EntityID: e1, EntityType: "person",
			Field: "nickname", Value: map[string]any{"v": "Countess", "n": json.Number("3")}, CreatedAt: f.CreatedAt}}, got)
	})

	t.Run("MoveObservations", func(t *testing.T) {
		move := func(t *testing.T, from, to string, want int) {
			t.Helper()
			var n int
			update(t, s, func(ctx context.Context, tx *graph.Tx) error {
				var err error
				n, err = tx.MoveObservations(ctx, alice, from, to)
				return err
			})
			if n != want {
				t.Errorf("MoveObservations(%s, %s) = %d, want %d", from, to, n, want)
			}
		}
		move(t, e1, e3, 4)
		move(t, e3, e4, 4)
		move(t, e1, e4, 0)
		moved := wantRows("obs_alice_2", "obs_alice_1", "obs_alice_3", "obs_alice_4")
		for i := range moved {
			moved[i].EntityID = e4 // OriginalEntityID stays e1
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Observation], error) {
			return listed(tx.Observations(ctx, alice, e4, graph.Page{}))
		})
		diff(t, "Observations of the entity moved to", moved, got.Rows)
		left := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Observation], error) {
			return listed(tx.Observations(ctx, alice, e1, graph.Page{}))
		})
		if len(left.Rows) != 0 || left.Total != 0 {
			t.Errorf("Observations of the entity moved from = %v (total %d), want none", observationIDs(left.Rows), left.Total)
		}
		other := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Observation, error) {
			return tx.Observation(ctx, alice, "obs_alice_5")
		})
		diff(t, "observation of another entity", want["obs_alice_5"], other)
	})
}
