package graphtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

func testEntities(t *testing.T, newStore Harness) {
	t.Run("PutAndReplace", func(t *testing.T) {
		s := newStore(t)
		e := newEntity(alice, "ent_alice_p", "person", at(epoch, 10))
		e.Snapshot = map[string]any{
			"name": "Ada", "age": 36, "height": 1.65, "exact": int64(9007199254740993), "active": true,
			"nothing": nil, "tags": []any{"x", 2}, "address": map[string]any{"zip": 12345, "city": "London"},
		}
		e.Provenance = map[string]string{"name": "obs_1", "age": "obs_2"}
		e.ObservationCount = 2
		e.CreatedAt, e.ComputedAt = at(epoch, 1), at(epoch, 11)
		putEntities(t, s, e)
		read := func(t *testing.T) graph.Entity {
			t.Helper()
			return view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Entity, error) {
				return tx.Entity(ctx, alice, e.ID)
			})
		}
		want := e
		want.Snapshot = jsonValue(t, e.Snapshot)
		diff(t, "Entity after insert", want, read(t))

		merged := e
		merged.Type, merged.CanonicalName, merged.SchemaVersion = "human", "Ada Lovelace", "2.0"
		merged.Snapshot = map[string]any{"name": "Ada Lovelace", "born": 1815}
		merged.Provenance = map[string]string{"name": "obs_3", "born": "obs_3"}
		merged.ObservationCount, merged.LastObservationAt = 3, at(epoch, 20)
		merged.CreatedAt, merged.ComputedAt = at(epoch, 2), at(epoch, 21)
		merged.MergedInto, merged.MergedAt = "ent_alice_q", at(epoch, 22)
		putEntities(t, s, merged)
		want = merged
		want.Snapshot = jsonValue(t, merged.Snapshot)
		got := read(t)
		diff(t, "Entity after replace", want, got)
		if !got.Merged() {
			t.Errorf("Merged() = false after PutEntity with MergedInto")
		}

		unmerged := merged
		unmerged.MergedInto, unmerged.MergedAt = "", time.Time{}
		putEntities(t, s, unmerged)
		want.MergedInto, want.MergedAt = "", unmerged.MergedAt
		diff(t, "Entity after replace without merge", want, read(t))
	})

	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Entity(ctx, alice, "ent_alice_missing")
			return err
		})
		wantNotFound(t, "Entity", err)
	})

	t.Run("Entities", func(t *testing.T) { testEntitiesByIDs(t, newStore) })
	t.Run("ListEntities", func(t *testing.T) { testListEntities(t, newStore) })
	t.Run("ListEntityStats", func(t *testing.T) { testListEntityStats(t, newStore) })
	t.Run("EntityTypeCounts", func(t *testing.T) { testEntityTypeCounts(t, newStore) })
	t.Run("EntityTypes", func(t *testing.T) { testEntityTypes(t, newStore) })
}

// testEntitiesByIDs checks Entities: order of the ids asked, missing ids
// skipped, and more ids than one round trip would carry.
func testEntitiesByIDs(t *testing.T, newStore Harness) {
	s := newStore(t)
	ids := manyEntities(t, s, alice, 1100)
	tests := []struct {
		name string
		ask  []string
		want []string
	}{
		{"None", nil, nil},
		{"Order", []string{ids[3], ids[1], ids[2]}, []string{ids[3], ids[1], ids[2]}},
		{"MissingSkipped", []string{"ent_alice_nope", ids[7], "ent_alice_nada", ids[5]}, []string{ids[7], ids[5]}},
		{"ManyReversed", reversed(ids), reversed(ids)},
		{"ManyWithMissing", withMissing(ids), ids},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
				return tx.Entities(ctx, alice, tc.ask)
			})
			diff(t, "Entities ids", tc.want, entityIDs(got))
		})
	}
	t.Run("Fields", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
			return tx.Entities(ctx, alice, []string{ids[9]})
		})
		want := newEntity(alice, ids[9], "thing", at(epoch, 9))
		want.Snapshot = jsonValue(t, want.Snapshot)
		diff(t, "Entities", []graph.Entity{want}, got)
	})
}

// reversed returns a reversed copy of ids.
func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// withMissing returns ids with a missing id after every tenth one.
func withMissing(ids []string) []string {
	var out []string
	for i, id := range ids {
		out = append(out, id)
		if i%10 == 0 {
			out = append(out, fmt.Sprintf("ent_missing_%d", i))
		}
	}
	return out
}

// entityIDs returns the ids of es in order.
func entityIDs(es []graph.Entity) []string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids
}

// manyEntities stores n entities of user and returns their ids in order.
func manyEntities(t *testing.T, s *graph.Store, user string, n int) []string {
	t.Helper()
	es := make([]graph.Entity, n)
	for i := range es {
		es[i] = newEntity(user, fmt.Sprintf("ent_%s_%04d", user, i), "thing", at(epoch, i))
	}
	putEntities(t, s, es...)
	return entityIDs(es)
}

// listFixture stores the entities the ListEntities and EntityTypeCounts
// tests read: ties on LastObservationAt, several types, one merged entity.
func listFixture(t *testing.T, s *graph.Store) {
	t.Helper()
	merged := newEntity(alice, "ent_alice_5", "person", at(epoch, 7))
	merged.MergedInto, merged.MergedAt = "ent_alice_1", at(epoch, 8)
	putEntities(t, s,
		newEntity(alice, "ent_alice_3", "org", at(epoch, 5)),
		newEntity(alice, "ent_alice_1", "person", at(epoch, 5)),
		newEntity(alice, "ent_alice_2", "person", at(epoch, 3)),
		newEntity(alice, "ent_alice_4", "project", at(epoch, 9)),
		merged,
		newEntity(alice, "ent_alice_6", "org", at(epoch, 1)),
		newEntity(bob, "ent_bob_1", "person", at(epoch, 4)),
	)
}

func testListEntities(t *testing.T, newStore Harness) {
	s := newStore(t)
	listFixture(t, s)
	tests := []struct {
		name      string
		filter    graph.EntityFilter
		want      []string
		wantTotal int
	}{
		{"All", graph.EntityFilter{}, []string{"4", "1", "3", "2", "6"}, 5},
		{"IncludeMerged", graph.EntityFilter{IncludeMerged: true}, []string{"4", "5", "1", "3", "2", "6"}, 6},
		{"OneType", graph.EntityFilter{Types: []string{"person"}}, []string{"1", "2"}, 2},
		{"OneTypeWithMerged", graph.EntityFilter{Types: []string{"person"}, IncludeMerged: true}, []string{"5", "1", "2"}, 3},
		{"TwoTypes", graph.EntityFilter{Types: []string{"person", "org"}}, []string{"1", "3", "2", "6"}, 4},
		{"UnknownType", graph.EntityFilter{Types: []string{"nope"}}, nil, 0},
		{"EmptyTypesMeansNone", graph.EntityFilter{Types: []string{}}, nil, 0},
		{"FirstPage", graph.EntityFilter{Page: graph.Page{Limit: 2}}, []string{"4", "1"}, 5},
		{"MiddlePage", graph.EntityFilter{Page: graph.Page{Limit: 2, Offset: 1}}, []string{"1", "3"}, 5},
		{"LastPage", graph.EntityFilter{Page: graph.Page{Limit: 2, Offset: 4}}, []string{"6"}, 5},
		{"PastTheEnd", graph.EntityFilter{Page: graph.Page{Limit: 2, Offset: 9}}, nil, 5},
		{"OffsetOnly", graph.EntityFilter{Page: graph.Page{Offset: 3}}, []string{"2", "6"}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.filter
			f.UserID = alice
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Entity], error) {
				return listed(tx.ListEntities(ctx, f))
			})
			want := make([]string, len(tc.want))
			for i, n := range tc.want {
				want[i] = "ent_alice_" + n
			}
			diff(t, "ListEntities ids", want, entityIDs(got.Rows))
			if got.Total != tc.wantTotal {
				t.Errorf("ListEntities total = %d, want %d", got.Total, tc.wantTotal)
			}
		})
	}
}

func testEntityTypeCounts(t *testing.T, newStore Harness) {
	s := newStore(t)
	listFixture(t, s)
	got := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]int, error) {
		return tx.EntityTypeCounts(ctx, alice)
	})
	diff(t, "EntityTypeCounts", map[string]int{"person": 2, "org": 2, "project": 1}, got)
}

func testEntityTypes(t *testing.T, newStore Harness) {
	s := newStore(t)
	listFixture(t, s)
	// A type whose only entity is merged is not among the types, as it is
	// not among EntityTypeCounts.
	gone := newEntity(alice, "ent_alice_7", "archive", at(epoch, 2))
	gone.MergedInto, gone.MergedAt = "ent_alice_1", at(epoch, 3)
	putEntities(t, s, gone)
	types := func(user string) []string {
		return view(t, s, func(ctx context.Context, tx *graph.Tx) ([]string, error) { return tx.EntityTypes(ctx, user) })
	}
	diff(t, "EntityTypes of alice", []string{"org", "person", "project"}, types(alice))
	diff(t, "EntityTypes of bob", []string{"person"}, types(bob))
	diff(t, "EntityTypes of a user without entities", []string{}, types("nobody"))
}
