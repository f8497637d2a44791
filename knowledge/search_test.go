package knowledge_test

import (
	"errors"
	gocmp "github.com/google/go-cmp/cmp"
	"slices"
	"sort"
	"testing"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
)

var searchFixtures = []map[string]any{
	{"entity_type": "person", "name": "Quill 004216", "email": "quill@acme.example"},
	{"entity_type": "person", "name": "Quill 004217", "email": "q2@acme.example"},
	{"entity_type": "company", "name": "Acme Anvils", "industry": "anvils"},
	{"entity_type": "company", "name": "Quill Supplies", "industry": "stationery"},
	{"entity_type": "company", "name": "Globex", "industry": "energy"},
}

func searchIDs(hits []knowledge.EntitySearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Entity.CanonicalName
	}
	return out
}

func TestSearchEntitiesText(t *testing.T) {
	s, _ := newService(t)
	store(t, s, alice, searchFixtures...)
	store(t, s, bob, map[string]any{"entity_type": "person", "name": "Quill Bob"})
	search := func(c knowledge.Caller, q knowledge.EntitySearchQuery) ([]string, int) {
		t.Helper()
		hits, total, err := s.SearchEntities(t.Context(), c, q)
		if err != nil {
			t.Fatalf("search %q: %v", q.Text, err)
		}
		for _, h := range hits {
			if !slices.Equal(h.Signals, []vector.Signal{vector.SignalText}) {
				t.Errorf("%s matched by %v, want text", h.Entity.CanonicalName, h.Signals)
			}
		}
		return searchIDs(hits), total
	}

	got, total := search(alice, knowledge.EntitySearchQuery{Text: "quill 004216"})
	if !slices.Equal(got, []string{"Quill 004216"}) || total != 1 {
		t.Errorf("quill 004216: %v (total %d), want [Quill 004216]", got, total)
	}
	// Every word, the last as a prefix; names rank above other text.
	got, total = search(alice, knowledge.EntitySearchQuery{Text: "acme"})
	if len(got) != 3 || got[0] != "Acme Anvils" || total != 3 {
		t.Errorf("acme: %v (total %d), want Acme Anvils first of 3", got, total)
	}
	got, _ = search(alice, knowledge.EntitySearchQuery{Text: "quill", EntityType: "company"})
	if !slices.Equal(got, []string{"Quill Supplies"}) {
		t.Errorf("quill companies: %v", got)
	}
	// Pages are windows of one order.
	all, total := search(alice, knowledge.EntitySearchQuery{Text: "quill"})
	if total != 3 || len(all) != 3 {
		t.Fatalf("quill: %v (total %d), want 3", all, total)
	}
	second, total := search(alice, knowledge.EntitySearchQuery{Text: "quill", Page: graph.Page{Limit: 1, Offset: 1}})
	if !slices.Equal(second, all[1:2]) || total != 3 {
		t.Errorf("second page: %v (total %d), want %v of 3", second, total, all[1:2])
	}

	// Consent filters inside the query: the page is full and the total
	// counts only what the caller may read.
	companies := only("read:" + knowledge.EntityResource("company"))
	got, total = search(companies, knowledge.EntitySearchQuery{Text: "acme", Page: graph.Page{Limit: 1}})
	if !slices.Equal(got, []string{"Acme Anvils"}) || total != 1 {
		t.Errorf("companies only, acme: %v (total %d), want [Acme Anvils] of 1", got, total)
	}
	got, total = search(companies, knowledge.EntitySearchQuery{Text: "quill", EntityType: "person"})
	if len(got) != 0 || total != 0 {
		t.Errorf("companies only, persons: %v (total %d), want none", got, total)
	}

	if _, _, err := s.SearchEntities(t.Context(), alice, knowledge.EntitySearchQuery{Text: " ?! "}); !errors.Is(err, knowledge.ErrValidation) {
		t.Errorf("a query without words: err = %v, want a validation error", err)
	}
}

// TestSearchEntitiesMatchesScan checks the indexed search against its
// simple oracle: every entity read and matched by graph.MatchEntity.
func TestSearchEntitiesMatchesScan(t *testing.T) {
	s, _ := newService(t)
	store(t, s, alice, searchFixtures...)
	ents, _, err := s.ListEntities(t.Context(), alice, knowledge.EntityQuery{Page: graph.Page{Limit: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"quill", "quill 0042", "acme example", "anvils", "energy globex", "q2", "stationery quill", "nothing"} {
		var want []string
		for _, e := range ents {
			if _, ok := graph.MatchEntity(e, graph.SearchTerms(q)); ok {
				want = append(want, e.CanonicalName)
			}
		}
		hits, total, err := s.SearchEntities(t.Context(), alice, knowledge.EntitySearchQuery{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		got := searchIDs(hits)
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) || total != len(want) {
			t.Errorf("%q: %v (total %d), want %v", q, got, total, want)
		}
	}
}

func TestSearchEntitiesMeaning(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		store(t, env.svc, alice, searchFixtures...)
		search := func(q knowledge.EntitySearchQuery) []knowledge.EntitySearchHit {
			t.Helper()
			hits, _, err := env.svc.SearchEntities(t.Context(), alice, q)
			if err != nil {
				t.Fatalf("search %q: %v", q.Text, err)
			}
			return hits
		}
		// Before the outbox is drained there is no embedding: text alone.
		hits := search(knowledge.EntitySearchQuery{Text: "globex", Meaning: knowledge.MeaningAlways})
		if len(hits) != 1 || !slices.Equal(hits[0].Signals, []vector.Signal{vector.SignalText}) {
			t.Fatalf("before embeddings: %v", hits)
		}
		drain(t, env.svc)

		hits = search(knowledge.EntitySearchQuery{Text: "globex", Meaning: knowledge.MeaningAlways})
		if len(hits) == 0 || hits[0].Entity.CanonicalName != "Globex" ||
			!slices.Equal(hits[0].Signals, []vector.Signal{vector.SignalVector, vector.SignalText}) || hits[0].Similarity == nil {
			t.Fatalf("globex by both: %+v", hits)
		}
		// A word no entity has, close in form to one that does: found by
		// meaning only (the local embedder compares word forms).
		hits = search(knowledge.EntitySearchQuery{Text: "globexs energy", Meaning: knowledge.MeaningAlways})
		i := slices.IndexFunc(hits, func(h knowledge.EntitySearchHit) bool { return h.Entity.CanonicalName == "Globex" })
		if i < 0 || !slices.Equal(hits[i].Signals, []vector.Signal{vector.SignalVector}) {
			t.Errorf("globexs energy: %v, want Globex by meaning", searchIDs(hits))
		}
		// MeaningNever: the text signal alone, even with embeddings.
		hits = search(knowledge.EntitySearchQuery{Text: "globexs energy", Meaning: knowledge.MeaningNever})
		if len(hits) != 0 {
			t.Errorf("globexs energy by text: %v, want none", searchIDs(hits))
		}
		// By default, meaning ranks alone when no entity has the words...
		hits = search(knowledge.EntitySearchQuery{Text: "globexs energy"})
		i = slices.IndexFunc(hits, func(h knowledge.EntitySearchHit) bool { return h.Entity.CanonicalName == "Globex" })
		if i < 0 || !slices.Equal(hits[i].Signals, []vector.Signal{vector.SignalVector}) {
			t.Errorf("globexs energy by default: %v, want Globex by meaning", searchIDs(hits))
		}
		// ...and is not asked when some entity has them.
		hits = search(knowledge.EntitySearchQuery{Text: "globex"})
		if len(hits) != 1 || !slices.Equal(hits[0].Signals, []vector.Signal{vector.SignalText}) {
			t.Errorf("globex by default: %+v, want the text hit alone", hits)
		}
		// Consent applies to the meaning signal too.
		persons := only("read:" + knowledge.EntityResource("person"))
		ph, _, err := env.svc.SearchEntities(t.Context(), persons, knowledge.EntitySearchQuery{Text: "globex energy", Meaning: knowledge.MeaningAlways})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range ph {
			if h.Entity.Type != "person" {
				t.Errorf("persons only: found %s %s", h.Entity.Type, h.Entity.CanonicalName)
			}
		}
		// A provider that does not answer leaves the text signal.
		env.emb.down.Store(true)
		hits = search(knowledge.EntitySearchQuery{Text: "globex", Meaning: knowledge.MeaningAlways})
		if len(hits) != 1 || !slices.Equal(hits[0].Signals, []vector.Signal{vector.SignalText}) {
			t.Errorf("provider down: %+v, want the text hit", hits)
		}
	})
}

// TestMeaningSearchFromTheCache checks that the meaning signal of an
// entity search answers the same from the entity-vector cache as from the
// stored embeddings: the same hits, scores and similarities as a service
// without a cache, on the first search (read from the store) and on the
// next (from the cache), and still after the stored embeddings are gone,
// which only the cache can answer from.
func TestMeaningSearchFromTheCache(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		stored := store(t, env.svc, alice, searchFixtures...)
		drain(t, env.svc)
		cold := knowledge.NewService(env.graph, schema.NewRegistry(), knowledge.Options{
			Now: env.clock.Now, Embedder: env.emb, EntityEmbeddings: env.vecs, EntityVectorCache: -1,
		})
		type hit struct {
			Name       string
			Score      float64
			Similarity float64
			Signals    []vector.Signal
		}
		search := func(s *knowledge.Service, text string) []hit {
			t.Helper()
			hits, _, err := s.SearchEntities(t.Context(), alice, knowledge.EntitySearchQuery{Text: text, Meaning: knowledge.MeaningAlways})
			if err != nil {
				t.Fatalf("search %q: %v", text, err)
			}
			out := make([]hit, len(hits))
			for i, h := range hits {
				out[i] = hit{Name: h.Entity.CanonicalName, Score: h.Score, Signals: h.Signals}
				if h.Similarity != nil {
					out[i].Similarity = *h.Similarity
				}
			}
			return out
		}
		queries := []string{"globexs energy", "quill acme", "anvils company", "stationery supplies"}
		want := map[string][]hit{}
		for _, q := range queries {
			want[q] = search(cold, q)
			if !slices.ContainsFunc(want[q], func(h hit) bool { return slices.Contains(h.Signals, vector.SignalVector) }) {
				t.Fatalf("%q: no hit by meaning (%v); the test needs some", q, want[q])
			}
			for round := range 2 {
				if d := gocmp.Diff(want[q], search(env.svc, q)); d != "" {
					t.Errorf("%q, search %d with the cache (-without +with):\n%s", q, round+1, d)
				}
			}
		}
		var ids []string
		for _, e := range stored.Entities {
			ids = append(ids, e.EntityID)
		}
		if err := env.vecs.Delete(t.Context(), alice.UserID, ids); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			if d := gocmp.Diff(want[q], search(env.svc, q)); d != "" {
				t.Errorf("%q, from the cache alone (-stored +cached):\n%s", q, d)
			}
		}
	})
}
