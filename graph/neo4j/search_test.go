package neo4j

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

func TestLuceneQuery(t *testing.T) {
	many := make([]string, maxTypeClauses+1)
	for i := range many {
		many[i] = fmt.Sprintf("type_%d", i)
	}
	for _, tc := range []struct {
		terms []string
		user  string
		types []string
		want  string
	}{
		{[]string{"quill"}, "", nil, `+(search_name:quill*^10 search_text:quill*)`},
		{[]string{"quill", "0042"}, "", nil, `+(search_name:quill^10 search_text:quill) +(search_name:0042*^10 search_text:0042*)`},
		// What SearchTerms never makes is escaped all the same.
		{[]string{`a:b`, `c"d`}, "", nil, `+(search_name:a\:b^10 search_text:a\:b) +(search_name:c\"d*^10 search_text:c\"d*)`},
		// The user and the types narrow what the index returns, as
		// phrases that do not score; a user id is quoted whatever it holds.
		{[]string{"quill"}, "usr_1", nil, `+(search_name:quill*^10 search_text:quill*) +user_id:"usr_1"^0`},
		{[]string{"quill"}, `a "b" \c d*`, []string{"company", "person"},
			`+(search_name:quill*^10 search_text:quill*) +user_id:"a \"b\" \\c d*"^0 +(entity_type:"company"^0 entity_type:"person"^0)`},
		// Too many types for one Lucene query: the statement filters them.
		{[]string{"quill"}, "usr_1", many, `+(search_name:quill*^10 search_text:quill*) +user_id:"usr_1"^0`},
	} {
		if got := luceneQuery(tc.terms, tc.user, tc.types); got != tc.want {
			t.Errorf("luceneQuery(%q, %q, %d types) = %s, want %s", tc.terms, tc.user, len(tc.types), got, tc.want)
		}
	}
	// Every term SearchTerms makes passes through unescaped: letters,
	// digits and marks only.
	for _, term := range graph.SearchTerms(`O'Brien & Söhne (Zürich) AND "x" 日本 café+1`) {
		if luceneEscape(term) != term {
			t.Errorf("term %q needed escaping", term)
		}
	}
}

func TestSearchEntitiesParams(t *testing.T) {
	f := (&fakeRunner{}).reply("entity_search", map[string]any{
		"total": int64(3), "page": []any{
			map[string]any{"id": "ent_2", "score": 4.5},
			map[string]any{"id": "ent_1", "score": int64(1)},
		},
	})
	read := &tx{r: f}
	hits, total, err := read.SearchEntities(t.Context(), graph.EntitySearch{
		UserID: "alice", Terms: []string{"acme", "lyo"}, Types: []string{"company"}, Page: graph.Page{Limit: 2, Offset: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []graph.EntityHit{{ID: "ent_2", Score: 4.5}, {ID: "ent_1", Score: 1}}; total != 3 || !cmp.Equal(hits, want) {
		t.Errorf("SearchEntities = %v, %d; want %v, 3", hits, total, want)
	}
	r := f.last(t, "entity_search")
	want := map[string]any{
		"query":  `+(search_name:acme^10 search_text:acme) +(search_name:lyo*^10 search_text:lyo*) +user_id:"alice"^0 +(entity_type:"company"^0)`,
		"userId": "alice",
		"types":  []string{"company"}, "includeMerged": false, "offset": int64(1), "limit": int64(2),
	}
	if d := cmp.Diff(want, r.params); d != "" {
		t.Errorf("entity_search params (-want +got):\n%s", d)
	}
	if !strings.Contains(r.query, "node.user_id = $userId") {
		t.Errorf("entity_search does not filter by user:\n%s", r.query)
	}

	// No terms, or no readable type, answer nothing without a query.
	f = &fakeRunner{}
	read = &tx{r: f}
	for _, q := range []graph.EntitySearch{{UserID: "alice"}, {UserID: "alice", Terms: []string{"a"}, Types: []string{}}} {
		if hits, total, err := read.SearchEntities(t.Context(), q); err != nil || len(hits) != 0 || total != 0 {
			t.Errorf("SearchEntities(%+v) = %v, %d, %v; want nothing", q, hits, total, err)
		}
	}
	if len(f.ran) != 0 {
		t.Errorf("ran %v for searches that match nothing", f.names())
	}
}

// TestSearchTextMatchesMatchEntity holds the index's text to the portable
// meaning of a match: a whitespace tokenizer over graph.SearchText, with
// the Lucene query's rules (every term a word, the last also a prefix, in
// the name or the text), agrees with graph.MatchEntity on every entity and
// query here.
func TestSearchTextMatchesMatchEntity(t *testing.T) {
	ents := []graph.Entity{
		{CanonicalName: "acme inc", Snapshot: map[string]any{"name": "ACME, Inc.", "city": "Lyon", "staff": json.Number("120")}},
		{CanonicalName: "o brien söhne", Snapshot: map[string]any{"name": "O'Brien & Söhne", "tags": []any{"Zürich", "beer"}}},
		{CanonicalName: "quill 004216", Snapshot: map[string]any{"notes": "met at the café; likes 日本 food", "address": map[string]any{"city": "Paris"}}},
	}
	queries := []string{"acme", "acm", "inc acme", "lyon", "120", "12", "brien", "o'brien söh", "zurich", "zürich",
		"quill 0042", "0042 quill", "日本", "caf", "café", "paris quill", "beer acme", "met"}
	index := func(e graph.Entity) (name, text []string) {
		n, b := graph.SearchText(e)
		return strings.Fields(n), strings.Fields(b)
	}
	has := func(words []string, term string, prefix bool) bool {
		for _, w := range words {
			if w == term || (prefix && strings.HasPrefix(w, term)) {
				return true
			}
		}
		return false
	}
	for _, e := range ents {
		name, text := index(e)
		for _, q := range queries {
			terms := graph.SearchTerms(q)
			lucene := len(terms) > 0
			for i, term := range terms {
				last := i == len(terms)-1
				if !has(name, term, last) && !has(text, term, last) {
					lucene = false
				}
			}
			if _, want := graph.MatchEntity(e, terms); lucene != want {
				t.Errorf("entity %q, query %q: index matches %v, MatchEntity %v", e.CanonicalName, q, lucene, want)
			}
		}
	}
}
