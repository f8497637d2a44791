package graphtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// testEntityCompletion holds the optional graph.EntityCompleter to its
// contract: keys that begin with the prefix, the whole name
// before inner words, case-insensitive for any script, by type, without
// merged entities nor other users', keys of renamed, retyped and merged
// entities kept current, and at most the limit of keys read; every answer
// is also the one graph.MatchCompletion and graph.FirstCompletions give
// over the entities stored.
func testEntityCompletion(t *testing.T, newStore Harness) {
	s := newStore(t)
	if !view(t, s, func(_ context.Context, tx *graph.Tx) (bool, error) {
		_, ok := tx.DriverTx.(graph.EntityCompleter)
		return ok, nil
	}) {
		t.Skip("the driver offers no graph.EntityCompleter")
	}
	var live []graph.Entity
	add := func(user, id, typ, name string) graph.Entity {
		e := newEntity(user, id, typ, at(epoch, len(live)))
		e.CanonicalName = name
		live = append(live, e)
		return e
	}
	add(alice, "ent_c01", "company", "ACME Rockets, Inc.")
	add(alice, "ent_c02", "company", "Acme")
	add(alice, "ent_c03", "company", "Rocket Acme Labs")
	add(alice, "ent_c04", "person", "Émile Zola")
	add(alice, "ent_c05", "person", "ÅSA Berg-Émile")
	add(alice, "ent_c06", "place", "Acmeville")
	add(alice, "ent_c07", "company", "Acme Old")
	add(alice, "ent_c08", "person", "Renamed Before")
	add(alice, "ent_c09", "company", "Retyped Acme")
	add(bob, "ent_c10", "company", "Acme of Bob")
	// Many entities of one type that match, and one type of few (the
	// narrow caller's case).
	for i := range 40 {
		add(alice, fmt.Sprintf("ent_m%03d", i), "invoice", fmt.Sprintf("Acme invoice %03d", 39-i))
	}
	add(alice, "ent_r01", "rare", "Acme rare one")
	putEntities(t, s, live...)

	// A merge, a rename and a change of type, written after the entities.
	merged := live[6]
	merged.MergedInto, merged.MergedAt = "ent_c02", epoch
	renamed := live[7]
	renamed.CanonicalName = "Renamed After"
	retyped := live[8]
	retyped.Type = "place"
	putEntities(t, s, merged, renamed, retyped)
	live[7], live[8] = renamed, retyped
	live = slices.Delete(live, 6, 7)

	complete := func(q graph.EntityCompletion) []graph.EntityCompletionHit {
		t.Helper()
		return view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.EntityCompletionHit, error) {
			hits, _, err := tx.CompleteEntities(ctx, q)
			return hits, err
		})
	}
	oracle := func(q graph.EntityCompletion) []graph.EntityCompletionHit {
		var keys []graph.EntityCompletionHit
		for _, e := range live {
			if e.UserID == q.UserID && (q.Types == nil || slices.Contains(q.Types, e.Type)) {
				keys = append(keys, graph.MatchCompletion(e.ID, e.CanonicalName, q)...)
			}
		}
		limit := q.Limit
		if limit <= 0 {
			limit = 10
		}
		return graph.FirstCompletions(keys, limit)
	}
	ids := func(hs []graph.EntityCompletionHit) []string {
		out := []string{}
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	for _, tc := range []struct {
		typed string
		ids   bool
		types []string
		limit int
		want  []string // the first ids, when the case says
	}{
		{typed: "acme", limit: 4, want: []string{"ent_c02", "ent_m039", "ent_m038", "ent_m037"}},
		{typed: "ACME R", want: []string{"ent_r01", "ent_c01"}},
		{typed: "acme ", types: []string{"company", "place"}, want: []string{"ent_c01", "ent_c03"}},
		{typed: "Acme", types: []string{"company", "place"}, want: []string{"ent_c02", "ent_c01", "ent_c06", "ent_c09", "ent_c03"}},
		{typed: "rock", want: []string{"ent_c03", "ent_c01"}},
		{typed: "émile", want: []string{"ent_c04", "ent_c05"}},
		{typed: "ÉMI", types: []string{"person"}, want: []string{"ent_c04", "ent_c05"}},
		{typed: "åsa b", want: []string{"ent_c05"}},
		{typed: "berg émile", want: []string{"ent_c05"}},
		{typed: "Acme Old", want: []string{}},
		{typed: "renamed b", want: []string{}},
		{typed: "renamed a", want: []string{"ent_c08"}},
		{typed: "acme", types: []string{"rare"}, want: []string{"ent_r01"}},
		{typed: "acme", types: []string{"invoice"}, limit: 3, want: []string{"ent_m039", "ent_m038", "ent_m037"}},
		{typed: "acme", types: []string{}, want: []string{}},
		{typed: "zzz", want: []string{}},
		{typed: "acme", limit: 100},
		{typed: "ent_c0", ids: true, limit: 3, want: []string{"ent_c01", "ent_c02", "ent_c03"}},
		{typed: "ent_c07", ids: true, want: []string{}},
		{typed: "ent_c", ids: true, types: []string{"place"}, want: []string{"ent_c06", "ent_c09"}},
		{typed: "ent_m", ids: true, limit: 100},
	} {
		q := graph.EntityCompletion{UserID: alice, Prefix: graph.CompletionKey(tc.typed), IDs: tc.ids, Types: tc.types, Limit: tc.limit}
		if tc.ids {
			q.Prefix = tc.typed
		}
		got := complete(q)
		if want := oracle(q); !slices.Equal(got, want) {
			t.Errorf("complete %q (ids %v, types %v, limit %d) = %v, want %v", tc.typed, tc.ids, tc.types, tc.limit, got, want)
		}
		if tc.want != nil && !slices.Equal(ids(got), tc.want) {
			t.Errorf("complete %q (ids %v, types %v, limit %d) = %v, want %v", tc.typed, tc.ids, tc.types, tc.limit, ids(got), tc.want)
		}
		if len(got) > max(tc.limit, 10) && tc.limit != 0 || tc.limit == 0 && len(got) > 10 {
			t.Errorf("complete %q: %d hits over the limit %d", tc.typed, len(got), tc.limit)
		}
	}
	if got := complete(graph.EntityCompletion{UserID: bob, Prefix: "acme"}); !slices.Equal(ids(got), []string{"ent_c10"}) {
		t.Errorf("bob's completion of acme = %v, want only his entity", got)
	}
}

// BackfillEntities are the entities the drivers' completion-key backfill
// tests write as a store from before the keys would hold them: 30 of
// alice's, companies and people whose names begin with a letter beyond
// ASCII, the fourth merged into the first.
func BackfillEntities(at time.Time) []graph.Entity {
	var ents []graph.Entity
	for i := range 30 {
		e := graph.Entity{ID: fmt.Sprintf("ent_b%03d", i), UserID: "alice", Type: []string{"company", "person"}[i%2],
			CanonicalName: fmt.Sprintf("Ölwerk Nummer %03d", i), SchemaVersion: "1.0", Snapshot: map[string]any{},
			ObservationCount: 1, LastObservationAt: at, CreatedAt: at, ComputedAt: at}
		if i == 3 {
			e.MergedInto, e.MergedAt = "ent_b000", at
		}
		ents = append(ents, e)
	}
	return ents
}

// CompletedIDs answers q from s's completion keys (EntityCompleter) and
// returns the ids it found, in order; it fails t when the driver keeps no
// keys.
func CompletedIDs(t *testing.T, s *graph.Store, q graph.EntityCompletion) []string {
	t.Helper()
	var out []string
	err := s.View(t.Context(), func(tx *graph.Tx) error {
		hits, ok, err := tx.CompleteEntities(t.Context(), q)
		if !ok {
			t.Fatal("the driver offers no graph.EntityCompleter")
		}
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
