package graphtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// RunEntitySearch runs only the entity search cases of the suite, so that
// the portable scan behind graph.Tx.SearchEntities (a driver without
// graph.EntitySearcher) can be held to the same contract.
func RunEntitySearch(t *testing.T, newStore Harness) { testEntitySearch(t, newStore) }

// searchFixture is the corpus of the search cases: names, emails, tax ids,
// nested values, and a field name ("email") that is no value's word.
func searchFixture() []graph.Entity {
	quill := newEntity(alice, "ent_alice_s1", "person", at(epoch, 1))
	quill.CanonicalName = "Quill 004216"
	quill.Snapshot = map[string]any{"name": "Quill 004216", "email": "quill@acme.example", "tax_id": "FR-12-345"}
	acme := newEntity(alice, "ent_alice_s2", "company", at(epoch, 2))
	acme.CanonicalName = "Acme Corp"
	acme.Snapshot = map[string]any{"name": "Acme Corp", "note": "supplier of quill pens", "employees": 120}
	quillon := newEntity(alice, "ent_alice_s3", "company", at(epoch, 3))
	quillon.CanonicalName = "Quillon 7"
	quillon.Snapshot = map[string]any{"name": "Quillon 7", "address": map[string]any{"city": "Lyon"}, "tags": []any{"blue", 42}}
	other := newEntity(alice, "ent_alice_s4", "person", at(epoch, 4))
	other.CanonicalName = "Zoë Café"
	other.Snapshot = map[string]any{"name": "Zoë Café", "role": "buyer"}
	return []graph.Entity{quill, acme, quillon, other}
}

// search runs q in a read transaction.
func search(t *testing.T, s *graph.Store, q graph.EntitySearch) page[graph.EntityHit] {
	t.Helper()
	return view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.EntityHit], error) {
		return listed(tx.SearchEntities(ctx, q))
	})
}

func hitIDs(hits []graph.EntityHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// checkOrder fails unless hits are ordered by score descending, then id.
func checkOrder(t *testing.T, what string, hits []graph.EntityHit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		a, b := hits[i-1], hits[i]
		if a.Score < b.Score || (a.Score == b.Score && a.ID >= b.ID) {
			t.Errorf("%s: %s (%v) before %s (%v): want score descending, then id", what, a.ID, a.Score, b.ID, b.Score)
		}
	}
}

func testEntitySearch(t *testing.T, newStore Harness) {
	t.Run("Matching", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ents := searchFixture()
		putEntities(t, s, ents...)
		stored := jsonValue(t, ents)
		for _, tc := range []struct {
			name, query string
			want        []string // ids, in any order
		}{
			{"name and number", "quill 004216", []string{"ent_alice_s1"}},
			{"case and punctuation", "  QUILL, 004216!", []string{"ent_alice_s1"}},
			{"last word is a prefix", "quill 0042", []string{"ent_alice_s1"}},
			{"other words are whole", "0042 quill", nil},
			{"every word must match", "lyon quill", []string{"ent_alice_s3"}},
			{"one word missing", "acme lyon", nil},
			{"prefix in name and text", "quill", []string{"ent_alice_s1", "ent_alice_s2", "ent_alice_s3"}},
			{"email parts", "acme example", []string{"ent_alice_s1"}},
			{"email whole", "quill@acme.example", []string{"ent_alice_s1"}},
			{"tax id parts", "fr 12 345", []string{"ent_alice_s1"}},
			{"tax id as typed", "FR-12-345", []string{"ent_alice_s1"}},
			{"number value", "120", []string{"ent_alice_s2"}},
			{"nested object", "lyon", []string{"ent_alice_s3"}},
			{"nested array", "blue 42", []string{"ent_alice_s3"}},
			{"field names are not text", "tax_id", nil},
			{"letters beyond ASCII", "zoë café", []string{"ent_alice_s4"}},
			{"no match", "zebra", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				terms := graph.SearchTerms(tc.query)
				got := search(t, s, graph.EntitySearch{UserID: alice, Terms: terms})
				ids := hitIDs(got.Rows)
				checkOrder(t, tc.query, got.Rows)
				sort.Strings(ids)
				diff(t, "SearchEntities("+tc.query+")", tc.want, ids)
				if got.Total != len(tc.want) {
					t.Errorf("total = %d, want %d", got.Total, len(tc.want))
				}
				// The portable definition agrees.
				var oracle []string
				for _, e := range stored {
					if _, ok := graph.MatchEntity(e, terms); ok {
						oracle = append(oracle, e.ID)
					}
				}
				diff(t, "MatchEntity("+tc.query+")", tc.want, oracle)
			})
		}
		if got := search(t, s, graph.EntitySearch{UserID: alice, Terms: nil}); len(got.Rows) != 0 || got.Total != 0 {
			t.Errorf("no terms: %v, total %d; want nothing", hitIDs(got.Rows), got.Total)
		}
	})

	t.Run("Ranking", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		// The same words once in the name of one entity and once in the
		// text of the other: the name wins, whichever id is smaller.
		inText := newEntity(alice, "ent_alice_r1", "note", at(epoch, 1))
		inText.CanonicalName, inText.Snapshot = "Minutes", map[string]any{"name": "Minutes", "body": "the harbour project"}
		inName := newEntity(alice, "ent_alice_r2", "project", at(epoch, 2))
		inName.CanonicalName, inName.Snapshot = "Harbour project", map[string]any{"name": "Harbour project", "body": "the minutes"}
		putEntities(t, s, inText, inName)
		got := search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("harbour project")})
		diff(t, "ranking", []string{"ent_alice_r2", "ent_alice_r1"}, hitIDs(got.Rows))
		if len(got.Rows) == 2 && got.Rows[0].Score <= got.Rows[1].Score {
			t.Errorf("scores %v, %v: a match in the name must score higher", got.Rows[0].Score, got.Rows[1].Score)
		}
	})

	t.Run("TiesAndPages", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		var es []graph.Entity
		for _, id := range []string{"ent_alice_t3", "ent_alice_t1", "ent_alice_t5", "ent_alice_t2", "ent_alice_t4"} {
			e := newEntity(alice, id, "note", at(epoch, 1))
			e.CanonicalName, e.Snapshot = "Same words", map[string]any{"name": "Same words"}
			es = append(es, e)
		}
		putEntities(t, s, es...)
		q := graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("same")}
		all := search(t, s, q)
		diff(t, "ties", []string{"ent_alice_t1", "ent_alice_t2", "ent_alice_t3", "ent_alice_t4", "ent_alice_t5"}, hitIDs(all.Rows))
		q.Page = graph.Page{Limit: 2, Offset: 1}
		got := search(t, s, q)
		diff(t, "page", []string{"ent_alice_t2", "ent_alice_t3"}, hitIDs(got.Rows))
		if got.Total != 5 {
			t.Errorf("page total = %d, want 5", got.Total)
		}
		q.Page = graph.Page{Limit: 2, Offset: 10}
		got = search(t, s, q)
		if len(got.Rows) != 0 || got.Total != 5 {
			t.Errorf("past the end: %v, total %d; want none, total 5", hitIDs(got.Rows), got.Total)
		}
	})

	t.Run("Types", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		putEntities(t, s, searchFixture()...)
		terms := graph.SearchTerms("quill")
		got := search(t, s, graph.EntitySearch{UserID: alice, Terms: terms, Types: []string{"company"}})
		ids := hitIDs(got.Rows)
		sort.Strings(ids)
		diff(t, "companies", []string{"ent_alice_s2", "ent_alice_s3"}, ids)
		if got.Total != 2 {
			t.Errorf("total = %d, want 2", got.Total)
		}
		got = search(t, s, graph.EntitySearch{UserID: alice, Terms: terms, Types: []string{}})
		if len(got.Rows) != 0 || got.Total != 0 {
			t.Errorf("no types: %v, total %d; want nothing", hitIDs(got.Rows), got.Total)
		}
		got = search(t, s, graph.EntitySearch{UserID: alice, Terms: terms, Types: []string{"person", "company"}})
		if got.Total != 3 {
			t.Errorf("both types: total %d, want 3", got.Total)
		}
	})

	t.Run("Isolation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		mine := newEntity(alice, "ent_alice_i1", "person", at(epoch, 1))
		mine.CanonicalName, mine.Snapshot = "Shared Name", map[string]any{"name": "Shared Name"}
		theirs := newEntity(bob, "ent_bob_i1", "person", at(epoch, 1))
		theirs.CanonicalName, theirs.Snapshot = "Shared Name", map[string]any{"name": "Shared Name", "secret": "bobonly"}
		putEntities(t, s, mine, theirs)
		got := search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("shared name")})
		diff(t, "alice", []string{"ent_alice_i1"}, hitIDs(got.Rows))
		if got.Total != 1 {
			t.Errorf("alice total = %d, want 1", got.Total)
		}
		got = search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("bobonly")})
		if len(got.Rows) != 0 || got.Total != 0 {
			t.Errorf("alice finds bob's text: %v, total %d", hitIDs(got.Rows), got.Total)
		}
		got = search(t, s, graph.EntitySearch{UserID: bob, Terms: graph.SearchTerms("bobonly")})
		diff(t, "bob", []string{"ent_bob_i1"}, hitIDs(got.Rows))
	})

	// OddUsers: user ids with spaces, quotes, backslashes and the
	// characters of a query syntax, one of them the words of two others.
	// A backend that narrows a search by user inside its text index
	// (Neo4j's) must still find each user's own entities, and only them.
	t.Run("OddUsers", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		users := []string{"usr a b", "usr a", "b", `usr "q" \ x*`, `usr "q"`, "usr:(x) OR y^2"}
		for i, u := range users {
			for j, typ := range []string{"person", "company"} {
				e := newEntity(u, fmt.Sprintf("ent_odd_%d_%d", i, j), typ, at(epoch, 1))
				e.CanonicalName, e.Snapshot = "Shared Name", map[string]any{"name": "Shared Name"}
				putEntities(t, s, e)
			}
		}
		for i, u := range users {
			got := search(t, s, graph.EntitySearch{UserID: u, Terms: graph.SearchTerms("shared nam")})
			diff(t, fmt.Sprintf("user %q", u), []string{fmt.Sprintf("ent_odd_%d_0", i), fmt.Sprintf("ent_odd_%d_1", i)}, hitIDs(got.Rows))
			if got.Total != 2 {
				t.Errorf("user %q: total %d, want 2", u, got.Total)
			}
			got = search(t, s, graph.EntitySearch{UserID: u, Terms: graph.SearchTerms("shared nam"), Types: []string{"company"}})
			diff(t, fmt.Sprintf("user %q, companies", u), []string{fmt.Sprintf("ent_odd_%d_1", i)}, hitIDs(got.Rows))
		}
	})

	t.Run("Updates", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		e := newEntity(alice, "ent_alice_u1", "company", at(epoch, 1))
		e.CanonicalName, e.Snapshot = "Old Name", map[string]any{"name": "Old Name", "city": "Paris"}
		putEntities(t, s, e)
		find := func(query string, merged bool) []string {
			t.Helper()
			return hitIDs(search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms(query), IncludeMerged: merged}).Rows)
		}
		e.CanonicalName, e.Snapshot = "New Name", map[string]any{"name": "New Name", "city": "Berlin"}
		e.LastObservationAt = at(epoch, 2)
		putEntities(t, s, e)
		diff(t, "old name", []string(nil), find("old", false))
		diff(t, "old text", []string(nil), find("paris", false))
		diff(t, "new name", []string{e.ID}, find("new name", false))
		diff(t, "new text", []string{e.ID}, find("berlin", false))

		// Seen inside the writing transaction too.
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			e.Snapshot = map[string]any{"name": "New Name", "city": "Madrid"}
			if err := tx.PutEntity(ctx, e); err != nil {
				return err
			}
			hits, _, err := tx.SearchEntities(ctx, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("madrid")})
			if err == nil && !slices.Equal(hitIDs(hits), []string{e.ID}) {
				t.Errorf("in the writing transaction: %v, want [%s]", hitIDs(hits), e.ID)
			}
			return err
		})

		e.MergedInto, e.MergedAt = "ent_alice_u2", at(epoch, 3)
		putEntities(t, s, e)
		diff(t, "merged, left out", []string(nil), find("madrid", false))
		diff(t, "merged, asked for", []string{e.ID}, find("madrid", true))
		e.MergedInto, e.MergedAt = "", time.Time{}
		putEntities(t, s, e)
		diff(t, "unmerged", []string{e.ID}, find("madrid", false))

		// A replace may change the type: the filter follows it.
		e.Type = "organisation"
		putEntities(t, s, e)
		diff(t, "old type", []string(nil), hitIDs(search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("madrid"), Types: []string{"company"}}).Rows))
		diff(t, "new type", []string{e.ID}, hitIDs(search(t, s, graph.EntitySearch{UserID: alice, Terms: graph.SearchTerms("madrid"), Types: []string{"organisation"}}).Rows))
	})
}
