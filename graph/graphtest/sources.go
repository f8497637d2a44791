package graphtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

func testSources(t *testing.T, newStore Harness) {
	s := newStore(t)
	src := newSource(alice, "src_alice_1", at(epoch, 1))
	src.Provenance = map[string]any{"agent": "claude", "n": 7, "ratio": 0.25, "tags": []any{"a", 1}}
	putSources(t, s, src)
	want := src
	want.Provenance = jsonValue(t, src.Provenance)

	t.Run("RoundTrip", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.Source(ctx, alice, src.ID)
		})
		diff(t, "Source", want, got)
		got = view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.SourceByHash(ctx, alice, src.ContentHash)
		})
		diff(t, "SourceByHash", want, got)
	})

	t.Run("DuplicateID", func(t *testing.T) {
		again := newSource(alice, src.ID, at(epoch, 2))
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertSource(ctx, again) })
		if !errors.Is(err, graph.ErrConflict) {
			t.Errorf("InsertSource of an existing id: err = %v, want graph.ErrConflict", err)
		}
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.Source, error) {
			return tx.Source(ctx, alice, src.ID)
		})
		diff(t, "Source after a refused insert", want, got)
	})

	t.Run("Missing", func(t *testing.T) {
		err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Source(ctx, alice, "src_alice_missing")
			return err
		})
		wantNotFoundError(t, "Source", err, "src_alice_missing")
		err = tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.SourceByHash(ctx, alice, "feedface")
			return err
		})
		wantNotFound(t, "SourceByHash", err)
		var nf *graph.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("SourceByHash: err = %v, want a *graph.NotFoundError", err)
		}
	})
}

// testListSources lists a user's sources newest first, by kind, by the
// entity types of the observations they produced (files always pass that
// filter; a source that produced no observation does not) and without
// excluded ids, a page at a time, with the total that match.
func testListSources(t *testing.T, newStore Harness) {
	s := newStore(t)
	srcs := map[string]graph.Source{}
	add := func(user, id, kind string, sec int) {
		src := newSource(user, id, at(epoch, sec))
		src.Kind = kind
		srcs[id] = src
		putSources(t, s, src)
	}
	add(alice, "src_alice_1", graph.SourceStructured, 1)
	add(alice, "src_alice_2", graph.SourceStructured, 2)
	add(alice, "src_alice_3", graph.SourceFile, 3)
	add(alice, "src_alice_4", graph.SourceRelationship, 4)
	add(alice, "src_alice_5", graph.SourceMerge, 5)
	add(alice, "src_alice_6", graph.SourceStructured, 5) // same time as 5: by id
	add(bob, "src_bob_1", graph.SourceStructured, 6)
	company, invoice, bobCompany := newEntity(alice, "ent_alice_co", "company", epoch), newEntity(alice, "ent_alice_inv", "invoice", epoch), newEntity(bob, "ent_bob_co", "company", epoch)
	putEntities(t, s, company, invoice, bobCompany)
	obs := func(user, id string, e graph.Entity, src string) graph.Observation {
		o := newObservation(user, id, e.ID, src, 1)
		o.EntityType = e.Type
		return o
	}
	insertObservations(t, s,
		obs(alice, "obs_alice_1", company, "src_alice_1"),
		obs(alice, "obs_alice_2", invoice, "src_alice_2"),
		obs(alice, "obs_alice_3", invoice, "src_alice_6"),
		obs(alice, "obs_alice_4", company, "src_alice_6"),
		obs(bob, "obs_bob_1", bobCompany, "src_bob_1"),
	)

	tests := []struct {
		name      string
		filter    graph.SourceFilter
		want      []int
		wantTotal int
	}{
		{"All", graph.SourceFilter{}, []int{5, 6, 4, 3, 2, 1}, 6},
		{"Kind", graph.SourceFilter{Kind: graph.SourceFile}, []int{3}, 1},
		{"Page", graph.SourceFilter{Page: graph.Page{Limit: 2, Offset: 1}}, []int{6, 4}, 6},
		{"PastTheEnd", graph.SourceFilter{Page: graph.Page{Offset: 6}}, []int{}, 6},
		{"EntityTypes", graph.SourceFilter{EntityTypes: []string{"company"}}, []int{6, 3, 1}, 3},
		{"EntityTypesAndKind", graph.SourceFilter{EntityTypes: []string{"company", "invoice"}, Kind: graph.SourceStructured}, []int{6, 2, 1}, 3},
		{"NoEntityType", graph.SourceFilter{EntityTypes: []string{}}, []int{3}, 1},
		{"Exclude", graph.SourceFilter{EntityTypes: []string{"invoice"}, ExcludeIDs: []string{"src_alice_3", "src_bob_1"}}, []int{6, 2}, 2},
		{"ExcludeOnly", graph.SourceFilter{ExcludeIDs: []string{"src_alice_5"}, Page: graph.Page{Limit: 1}}, []int{6}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.filter
			f.UserID = alice
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Source], error) {
				return listed(tx.ListSources(ctx, f))
			})
			want := make([]graph.Source, len(tt.want))
			for i, n := range tt.want {
				want[i] = srcs[fmt.Sprintf("src_alice_%d", n)]
				want[i].Provenance = jsonValue(t, want[i].Provenance)
			}
			diff(t, "ListSources", want, got.Rows)
			if got.Total != tt.wantTotal {
				t.Errorf("ListSources total = %d, want %d", got.Total, tt.wantTotal)
			}
		})
	}
	t.Run("OtherUser", func(t *testing.T) {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Source], error) {
			return listed(tx.ListSources(ctx, graph.SourceFilter{UserID: bob, EntityTypes: []string{"invoice", "company"}}))
		})
		if len(got.Rows) != 1 || got.Rows[0].ID != "src_bob_1" || got.Total != 1 {
			t.Errorf("bob's sources: %+v", got)
		}
	})
}
