package graphtest

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testListEntityStats checks that ListEntityStats lists exactly what
// ListEntities lists, filter for filter and page for page, with each
// entity's statistics, and nothing of another user.
func testListEntityStats(t *testing.T, newStore Harness) {
	s := newStore(t)
	listFixture(t, s)
	putEntities(t, s, newEntity(bob, "ent_bob_1", "person", at(epoch, 6)))
	filters := map[string]graph.EntityFilter{
		"All":                 {},
		"IncludeMerged":       {IncludeMerged: true},
		"OneType":             {Types: []string{"person"}},
		"OneTypeWithMerged":   {Types: []string{"person"}, IncludeMerged: true},
		"TwoTypes":            {Types: []string{"person", "org"}},
		"UnknownType":         {Types: []string{"nope"}},
		"EmptyTypesMeansNone": {Types: []string{}},
		"FirstPage":           {Page: graph.Page{Limit: 2}},
		"MiddlePage":          {Page: graph.Page{Limit: 2, Offset: 1}},
		"PastTheEnd":          {Page: graph.Page{Limit: 2, Offset: 9}},
		"OffsetOnly":          {Page: graph.Page{Offset: 3}},
	}
	for name, f := range filters {
		t.Run(name, func(t *testing.T) {
			f.UserID = alice
			var want []graph.EntityStat
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
				ents, _, err := tx.ListEntities(ctx, f)
				if err != nil {
					return nil, err
				}
				for _, e := range ents {
					want = append(want, graph.EntityStat{
						ID: e.ID, Type: e.Type, CanonicalName: e.CanonicalName, ObservationCount: e.ObservationCount,
						LastObservationAt: e.LastObservationAt, MergedInto: e.MergedInto,
					})
				}
				return tx.ListEntityStats(ctx, f)
			})
			diff(t, "ListEntityStats", want, got)
		})
	}
	t.Run("Values", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: alice, Types: []string{"person"}, IncludeMerged: true})
		})
		want := []graph.EntityStat{}
		for _, e := range []graph.Entity{
			newEntity(alice, "ent_alice_5", "person", at(epoch, 7)),
			newEntity(alice, "ent_alice_1", "person", at(epoch, 5)),
			newEntity(alice, "ent_alice_2", "person", at(epoch, 3)),
		} {
			want = append(want, graph.EntityStat{ID: e.ID, Type: e.Type, CanonicalName: e.CanonicalName,
				ObservationCount: e.ObservationCount, LastObservationAt: e.LastObservationAt})
		}
		want[0].MergedInto = "ent_alice_1"
		diff(t, "ListEntityStats of persons", want, got)
	})
	t.Run("OtherUser", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityStat, error) {
			return tx.ListEntityStats(ctx, graph.EntityFilter{UserID: bob})
		})
		if len(got) != 1 || got[0].ID != "ent_bob_1" {
			t.Errorf("bob's entity stats = %+v, want only ent_bob_1", got)
		}
	})
}
