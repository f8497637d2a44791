package graphtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// exporter returns tx's graph.Exporter, failing the test when the driver
// lacks it: every driver of Cairn can be exported and imported.
func exporter(tx *graph.Tx) (graph.Exporter, error) {
	ex, ok := tx.DriverTx.(graph.Exporter)
	if !ok {
		return nil, errors.New("the driver's transaction does not implement graph.Exporter")
	}
	return ex, nil
}

// pageAll reads every row of a paged Exporter method, limit at a time,
// and checks that no page is longer than limit.
func pageAll[T any, K any](t *testing.T, s *graph.Store, limit int, first K, key func(T) K,
	next func(ctx context.Context, ex graph.Exporter, after K, limit int) ([]T, error)) []T {
	t.Helper()
	var out []T
	after := first
	for range 100 {
		rows := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]T, error) {
			ex, err := exporter(tx)
			if err != nil {
				return nil, err
			}
			return next(ctx, ex, after, limit)
		})
		if len(rows) > limit {
			t.Fatalf("a page of %d rows, limit %d", len(rows), limit)
		}
		out = append(out, rows...)
		if len(rows) < limit {
			return out
		}
		after = key(rows[len(rows)-1])
	}
	t.Fatal("paging did not end")
	return nil
}

func testExport(t *testing.T, newStore Harness) {
	s := newStore(t)
	// Sources, given out of order, and one of bob's that alice never sees.
	var srcs []graph.Source
	for _, n := range []int{3, 1, 4, 2, 5} {
		srcs = append(srcs, newSource(alice, fmt.Sprintf("src_alice_%d", n), at(epoch, n)))
	}
	putSources(t, s, append(slices.Clone(srcs), newSource(bob, "src_bob_1", epoch))...)
	// Entities, one merged into another, and one of bob's.
	a, b, c := newEntity(alice, "ent_alice_c", "person", at(epoch, 1)), newEntity(alice, "ent_alice_a", "person", at(epoch, 2)),
		newEntity(alice, "ent_alice_b", "company", at(epoch, 3))
	a.MergedInto, a.MergedAt = b.ID, at(epoch, 9)
	putEntities(t, s, a, b, c, newEntity(bob, "ent_bob_a", "person", epoch))

	t.Run("SourcesAfter", func(t *testing.T) {
		got := pageAll(t, s, 2, "", func(s graph.Source) string { return s.ID },
			func(ctx context.Context, ex graph.Exporter, after string, limit int) ([]graph.Source, error) {
				return ex.SourcesAfter(ctx, alice, after, limit)
			})
		want := slices.Clone(srcs)
		slices.SortFunc(want, func(x, y graph.Source) int { return strings.Compare(x.ID, y.ID) })
		diff(t, "SourcesAfter", jsonValue(t, want), got)
	})

	t.Run("EntitiesAfter", func(t *testing.T) {
		got := pageAll(t, s, 1, "", func(e graph.Entity) string { return e.ID },
			func(ctx context.Context, ex graph.Exporter, after string, limit int) ([]graph.Entity, error) {
				return ex.EntitiesAfter(ctx, alice, after, limit)
			})
		diff(t, "EntitiesAfter, merged included", jsonValue(t, []graph.Entity{b, c, a}), got)
	})

	t.Run("IdentifiersAndTimelines", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.SetEntityIdentifiers(ctx, alice, []graph.EntityIdentifiers{
				{EntityID: c.ID, Identifiers: []graph.Identifier{{Field: "name", Value: "zed"}, {Field: "email", Value: "z@x.org"}, {Field: "name", Value: "acme"}}},
				{EntityID: b.ID, Identifiers: []graph.Identifier{{Field: "name", Value: "ann"}}},
			}); err != nil {
				return err
			}
			return tx.ReplaceEntityTimelines(ctx, alice, []graph.EntityTimeline{
				{EntityID: c.ID, Events: []graph.TimelineEvent{
					{ID: "evt_alice_2", UserID: alice, EntityID: c.ID, EventType: "founded", Timestamp: "2001-02-03", Time: at(epoch, -1000), SourceID: srcs[0].ID, Properties: map[string]any{"field": "founded"}},
					{ID: "evt_alice_1", UserID: alice, EntityID: c.ID, EventType: "closed", Timestamp: "2011-02-03", Time: at(epoch, -10), SourceID: srcs[1].ID, Properties: map[string]any{"n": 1}},
				}},
				{EntityID: b.ID, Events: []graph.TimelineEvent{
					{ID: "evt_alice_3", UserID: alice, EntityID: b.ID, EventType: "born", Timestamp: "1990-01-01", Time: at(epoch, -100000), SourceID: srcs[0].ID},
				}},
			})
		})
		ids := []string{c.ID, "ent_alice_missing", b.ID, a.ID, "ent_bob_a"}
		gotIdents := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityIdentifiers, error) {
			ex, err := exporter(tx)
			if err != nil {
				return nil, err
			}
			return ex.EntitiesIdentifiers(ctx, alice, ids)
		})
		diff(t, "EntitiesIdentifiers", []graph.EntityIdentifiers{
			{EntityID: b.ID, Identifiers: []graph.Identifier{{Field: "name", Value: "ann"}}},
			{EntityID: c.ID, Identifiers: []graph.Identifier{{Field: "email", Value: "z@x.org"}, {Field: "name", Value: "acme"}, {Field: "name", Value: "zed"}}},
		}, gotIdents)
		gotEvents := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityTimeline, error) {
			ex, err := exporter(tx)
			if err != nil {
				return nil, err
			}
			return ex.EntitiesTimelines(ctx, alice, ids)
		})
		diff(t, "EntitiesTimelines", jsonValue(t, []graph.EntityTimeline{
			{EntityID: b.ID, Events: []graph.TimelineEvent{
				{ID: "evt_alice_3", UserID: alice, EntityID: b.ID, EventType: "born", Timestamp: "1990-01-01", Time: at(epoch, -100000), SourceID: srcs[0].ID},
			}},
			{EntityID: c.ID, Events: []graph.TimelineEvent{
				{ID: "evt_alice_1", UserID: alice, EntityID: c.ID, EventType: "closed", Timestamp: "2011-02-03", Time: at(epoch, -10), SourceID: srcs[1].ID, Properties: map[string]any{"n": 1}},
				{ID: "evt_alice_2", UserID: alice, EntityID: c.ID, EventType: "founded", Timestamp: "2001-02-03", Time: at(epoch, -1000), SourceID: srcs[0].ID, Properties: map[string]any{"field": "founded"}},
			}},
		}), gotEvents)
		none := view(t, s, func(ctx context.Context, tx *graph.Tx) (int, error) {
			ex, err := exporter(tx)
			if err != nil {
				return 0, err
			}
			idents, err := ex.EntitiesIdentifiers(ctx, alice, nil)
			if err != nil {
				return 0, err
			}
			events, err := ex.EntitiesTimelines(ctx, alice, nil)
			return len(idents) + len(events), err
		})
		if none != 0 {
			t.Errorf("no entity ids gave %d identifier sets and timelines, want 0", none)
		}
	})

	t.Run("RawFragments", func(t *testing.T) {
		var fs []graph.RawFragment
		for i, v := range []any{"text", 42, 0.5, map[string]any{"k": []any{1, "x"}}, true, nil} {
			fs = append(fs, graph.RawFragment{
				ID: fmt.Sprintf("raw_alice_%d", 5-i), UserID: alice, SourceID: srcs[i%len(srcs)].ID, EntityID: b.ID,
				EntityType: "person", Field: fmt.Sprintf("f%d", i), Value: v, CreatedAt: at(epoch, i),
			})
		}
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.InsertRawFragments(ctx, fs); err != nil {
				return err
			}
			return tx.InsertRawFragment(ctx, graph.RawFragment{ID: "raw_bob_1", UserID: bob, SourceID: "src_bob_1",
				EntityID: "ent_bob_a", EntityType: "person", Field: "f", Value: 1, CreatedAt: epoch})
		})
		got := pageAll(t, s, 4, "", func(f graph.RawFragment) string { return f.ID },
			func(ctx context.Context, ex graph.Exporter, after string, limit int) ([]graph.RawFragment, error) {
				return ex.RawFragmentsAfter(ctx, alice, after, limit)
			})
		want := slices.Clone(fs)
		slices.Reverse(want)
		diff(t, "RawFragmentsAfter", jsonValue(t, want), got)

		byID := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RawFragment, error) {
			ex, err := exporter(tx)
			if err != nil {
				return nil, err
			}
			return ex.RawFragmentsByID(ctx, alice, []string{fs[2].ID, "raw_bob_1", "raw_alice_missing", fs[0].ID, fs[2].ID})
		})
		diff(t, "RawFragmentsByID", jsonValue(t, []graph.RawFragment{fs[2], fs[0]}), byID)
	})

	t.Run("RelationshipPeriodsAfter", func(t *testing.T) {
		s := newStore(t)
		buildGraph(t, s, alice, []node{{"ent_alice_a", "person"}, {"ent_alice_b", "person"}, {"ent_alice_c", "company"}}, nil)
		buildGraph(t, s, bob, []node{{"ent_bob_a", "person"}, {"ent_bob_b", "person"}}, nil)
		ab := link{graph.RefersTo, "ent_alice_a", "ent_alice_b", at(epoch, 1)}
		bc := link{graph.PartOf, "ent_alice_b", "ent_alice_c", at(epoch, 2)}
		var want []graph.Relationship
		want = append(want, createLink(t, s, alice, ab))
		want[0] = endLink(t, s, alice, ab, at(epoch, 5))
		ab.at = at(epoch, 7)
		want = append(want, createLink(t, s, alice, ab))
		want[1] = endLink(t, s, alice, ab, at(epoch, 8))
		ab.at = at(epoch, 9)
		want = append(want, createLink(t, s, alice, ab), createLink(t, s, alice, bc))
		createLink(t, s, bob, link{graph.RefersTo, "ent_bob_a", "ent_bob_b", epoch})
		slices.SortStableFunc(want, func(x, y graph.Relationship) int { return strings.Compare(x.ID, y.ID) })

		for _, limit := range []int{1, 2, 10} {
			got := pageAll(t, s, limit, graph.PeriodKey{}, graph.Relationship.Key,
				func(ctx context.Context, ex graph.Exporter, after graph.PeriodKey, limit int) ([]graph.Relationship, error) {
					return ex.RelationshipPeriodsAfter(ctx, alice, after, limit)
				})
			diff(t, fmt.Sprintf("RelationshipPeriodsAfter by %d", limit), jsonValue(t, want), got)
		}
		// A key of an id with a zero time starts at that id's first period.
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Relationship, error) {
			ex, err := exporter(tx)
			if err != nil {
				return nil, err
			}
			return ex.RelationshipPeriodsAfter(ctx, alice, graph.PeriodKey{ID: ab.relID()}, 10)
		})
		var from []graph.Relationship
		for _, r := range want {
			if r.ID >= ab.relID() {
				from = append(from, r)
			}
		}
		diff(t, "RelationshipPeriodsAfter from an id", jsonValue(t, from), got)
	})
}
