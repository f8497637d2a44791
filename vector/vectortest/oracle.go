package vectortest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// oracleRows is the size of the oracle data set: large enough that the
// rarest filter (0.1%) matches 5 rows.
const oracleRows = 5000

// fruit are the words of the oracle rows' texts; each is on 10% of rows.
var fruit = []string{"apple", "kiwi", "mango", "plum", "grape", "lemon", "melon", "peach", "guava", "lime"}

// dataset is what the oracle knows: every row alice saved.
type dataset struct {
	rows  map[string]vector.Memory // by id, with embeddings
	all   []vector.Memory
	words map[string][]string // by id: the lower-case words of title and text
}

// oracleData saves the oracle data set: alice's rows in "big" and "side",
// and bob's rows in "big", which sit exactly on the query vectors so that
// any leak would top the results.
func oracleData(t *testing.T, s *vector.Store, queries [][]float32) dataset {
	t.Helper()
	r := rand.New(rand.NewPCG(42, 43))
	ds := dataset{rows: map[string]vector.Memory{}, words: map[string][]string{}}
	var batch []vector.Memory
	flush := func() {
		for _, m := range save(t, s, testSpace, batch...) {
			if m.UserID == alice {
				ds.rows[m.ID] = m
				ds.words[m.ID] = strings.Fields(strings.ToLower(m.Title + " " + m.Text))
				ds.all = append(ds.all, m)
			}
		}
		batch = batch[:0]
	}
	for i := range oracleRows + 100 {
		m := vector.Memory{
			ID: fmt.Sprintf("mem_oracle_%05d", i), UserID: alice, Collection: "big",
			Text:      fmt.Sprintf("row %d about %s", i, fruit[i%10]),
			CreatedAt: epoch.Add(time.Duration(i) * time.Minute), Embedding: randomVector(r, testSpace.Dimension),
			EntityIDs: []string{fmt.Sprintf("ent_%d", i%50)}, SourceID: fmt.Sprintf("src_%d", i%20),
			Metadata: map[string]any{"llm": fmt.Sprintf("m%d", i%4)},
		}
		if i%7 != 0 {
			m.Confidence = ptr(float64(i%101) / 100)
		}
		if i%1000 == 7 {
			m.Tags = append(m.Tags, "rare") // 0.1%
		}
		if i%100 == 3 {
			m.Tags = append(m.Tags, "uncommon") // 1%
		}
		if i%10 == 1 {
			m.Tags = append(m.Tags, "common") // 10%
		}
		if i%3 == 0 {
			m.Tags = append(m.Tags, "triple")
		}
		if i%2 == 0 {
			m.Tags = append(m.Tags, "half") // 50%
		}
		// Types: "note" on 5% of the rows, "invoice" on 12% (some of
		// them grape rows, as half the notes are), both on 1%.
		if i%20 == 4 {
			m.Types = append(m.Types, "note")
		}
		if i%10 == 5 || i%50 == 14 {
			m.Types = append(m.Types, "invoice")
		}
		if i >= oracleRows {
			// Among the big rows' times, some equal to one of theirs, so
			// that a listing by time interleaves the collections and
			// breaks ties by id.
			m.Collection = "side"
			m.CreatedAt = epoch.Add(time.Duration((i-oracleRows)*37) * time.Minute)
			if i%2 == 1 {
				m.CreatedAt = m.CreatedAt.Add(30 * time.Second)
			}
		}
		batch = append(batch, m)
		if len(batch) == 1000 {
			flush()
		}
	}
	for i, q := range queries {
		batch = append(batch, vector.Memory{
			ID: fmt.Sprintf("mem_bob_%d", i), UserID: bob, Collection: "big", Text: "bob row", Embedding: q,
			Tags: []string{"rare", "uncommon", "common", "triple", "half"}, EntityIDs: []string{"ent_7"}, Confidence: ptr(1.0),
		})
	}
	flush()
	return ds
}

// passes is the oracle's own filter.
func (ds dataset) passes(m vector.Memory, f vector.Filter) bool {
	if m.UserID != f.UserID || !slices.Contains(f.Collections, m.Collection) {
		return false
	}
	for _, tag := range f.Tags {
		if !slices.Contains(m.Tags, tag) {
			return false
		}
	}
	words := ds.words[m.ID]
	for _, k := range f.Keywords {
		if !slices.Contains(words, k) {
			return false
		}
	}
	switch {
	case !f.OccurredFrom.IsZero() && occurredAt(m).Before(f.OccurredFrom),
		!f.OccurredTo.IsZero() && occurredAt(m).After(f.OccurredTo),
		f.MinConfidence != nil && (m.Confidence == nil || *m.Confidence < *f.MinConfidence),
		f.EntityID != "" && !slices.Contains(m.EntityIDs, f.EntityID),
		f.SourceID != "" && m.SourceID != f.SourceID:
		return false
	}
	for k, v := range f.Metadata {
		if got, _ := m.Metadata[k].(string); got != v {
			return false
		}
	}
	if f.ReadableTypes != nil {
		for _, typ := range m.Types {
			if !slices.Contains(f.ReadableTypes, typ) {
				return false
			}
		}
	}
	return true
}

type scoredRow struct {
	id  string
	sim float64
}

// exact is the oracle's answer: every row that passes f with a similarity
// of at least minSim, most similar first, ties by id.
func (ds dataset) exact(f vector.Filter, q []float32, minSim float64) []scoredRow {
	var out []scoredRow
	for _, m := range ds.all {
		if !ds.passes(m, f) {
			continue
		}
		if sim := cosine(q, m.Embedding); sim >= minSim {
			out = append(out, scoredRow{m.ID, sim})
		}
	}
	slices.SortFunc(out, func(a, b scoredRow) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

// simTolerance absorbs float32 arithmetic in the backends.
const simTolerance = 1e-4

func testOracle(t *testing.T, h Harness) {
	s := open(t, h)
	r := rand.New(rand.NewPCG(99, 100))
	queries := make([][]float32, 5)
	for i := range queries {
		queries[i] = randomVector(r, testSpace.Dimension)
	}
	ds := oracleData(t, s, queries)
	big := []string{"big"}
	cases := []struct {
		name   string
		f      vector.Filter
		minSim float64
		limit  int
		offset int
	}{
		{name: "unfiltered", minSim: -1, limit: 10},
		{name: "unfiltered at 0.3", minSim: 0.3, limit: 100},
		{name: "unfiltered at 0.5", minSim: 0.5, limit: 100},
		{name: "0.1% by tag", f: vector.Filter{Tags: []string{"rare"}}, minSim: -1, limit: 10},
		{name: "1% by tag", f: vector.Filter{Tags: []string{"uncommon"}}, minSim: -1, limit: 10},
		{name: "1% by tag, all of it", f: vector.Filter{Tags: []string{"uncommon"}}, minSim: -1, limit: 100},
		{name: "10% by tag", f: vector.Filter{Tags: []string{"common"}}, minSim: -1, limit: 10},
		{name: "10% by tag at 0.4", f: vector.Filter{Tags: []string{"common"}}, minSim: 0.4, limit: 100},
		{name: "50% by tag", f: vector.Filter{Tags: []string{"half"}}, minSim: -1, limit: 10},
		{name: "two tags", f: vector.Filter{Tags: []string{"uncommon", "triple"}}, minSim: -1, limit: 10},
		{name: "0.1% by date", f: vector.Filter{OccurredFrom: epoch.Add(1000 * time.Minute), OccurredTo: epoch.Add(1004 * time.Minute)}, minSim: -1, limit: 10},
		{name: "min confidence", f: vector.Filter{MinConfidence: ptr(0.95)}, minSim: -1, limit: 10},
		{name: "entity (2%)", f: vector.Filter{EntityID: "ent_7"}, minSim: -1, limit: 10},
		{name: "source and metadata (1.25%)", f: vector.Filter{SourceID: "src_3", Metadata: map[string]string{"llm": "m3"}}, minSim: -1, limit: 10},
		{name: "keyword (10%)", f: vector.Filter{Keywords: []string{"kiwi"}}, minSim: -1, limit: 10},
		{name: "keyword and tag (1%)", f: vector.Filter{Keywords: []string{"kiwi"}, Tags: []string{"common"}}, minSim: -1, limit: 10},
		{name: "two collections", f: vector.Filter{Collections: []string{"big", "side"}}, minSim: -1, limit: 20},
		{name: "readable note (88%)", f: vector.Filter{ReadableTypes: []string{"note"}}, minSim: -1, limit: 10},
		{name: "readable none (84%) at 0.4", f: vector.Filter{ReadableTypes: []string{}}, minSim: 0.4, limit: 100},
		{name: "keyword and readable note (8%)", f: vector.Filter{Keywords: []string{"grape"}, ReadableTypes: []string{"note"}}, minSim: -1, limit: 10},
		{name: "entity and readable none (1%)", f: vector.Filter{EntityID: "ent_4", ReadableTypes: []string{}}, minSim: -1, limit: 10},
		{name: "second page", minSim: -1, limit: 10, offset: 10},
		{name: "deep page", f: vector.Filter{Tags: []string{"common"}}, minSim: -1, limit: 50, offset: 150},
	}
	var found, wanted int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.UserID = alice
			if f.Collections == nil {
				f.Collections = big
			}
			for qi, q := range queries {
				all := ds.exact(f, q, tc.minSim)
				if len(all) == 0 {
					t.Fatalf("query %d: the oracle finds nothing; the case tests nothing", qi)
				}
				want := all[min(tc.offset, len(all)):min(tc.offset+tc.limit, len(all))]
				res := search(t, s, vector.Query{
					Filter: f, Text: noMatchText, Vector: q, Space: testSpace, MinSimilarity: ptr(tc.minSim),
					Limit: tc.limit, Offset: tc.offset,
				})
				if len(res.Hits) != len(want) {
					t.Fatalf("query %d: %d hits, want min(limit, matching rows) = %d", qi, len(res.Hits), len(want))
				}
				if wantMore := tc.offset+tc.limit < len(all); res.HasMore != wantMore {
					t.Errorf("query %d: has_more %v, want %v", qi, res.HasMore, wantMore)
				}
				for i, hit := range res.Hits {
					row, ok := ds.rows[hit.ID]
					if !ok {
						t.Fatalf("query %d: hit %s is not one of alice's rows", qi, hit.ID)
					}
					if !ds.passes(row, f) {
						t.Errorf("query %d: hit %s does not pass the filter", qi, hit.ID)
					}
					if hit.Similarity == nil || !slices.Equal(hit.Signals, []vector.Signal{vector.SignalVector}) {
						t.Fatalf("query %d: hit %s: similarity %v, signals %v; want a vector match", qi, hit.ID, hit.Similarity, hit.Signals)
					}
					trueSim := cosine(q, row.Embedding)
					if math.Abs(*hit.Similarity-trueSim) > simTolerance {
						t.Errorf("query %d: hit %s reports similarity %v, the exact one is %v", qi, hit.ID, *hit.Similarity, trueSim)
					}
					if trueSim < tc.minSim-simTolerance {
						t.Errorf("query %d: hit %s has similarity %v, below %v", qi, hit.ID, trueSim, tc.minSim)
					}
					if !h.Approximate && math.Abs(*hit.Similarity-want[i].sim) > simTolerance {
						t.Errorf("query %d: hit %d is %s at %v, the exact search has %s at %v", qi, i, hit.ID, *hit.Similarity, want[i].id, want[i].sim)
					}
				}
				if h.Approximate {
					for _, w := range want[:min(10, len(want))] {
						wanted++
						if slices.Contains(hitIDs(res.Hits), w.id) {
							found++
						}
					}
				}
			}
		})
	}
	t.Run("listing by time", func(t *testing.T) { testOracleListing(t, s, ds) })
	if h.Approximate {
		recall := float64(found) / float64(wanted)
		t.Logf("recall@10 against exact search: %.3f over %d expected rows", recall, wanted)
		if recall < MinRecall {
			t.Errorf("recall@10 %.3f, want at least %v", recall, MinRecall)
		}
	}
}

// testOracleListing checks listings (no text, no vector) sorted by time
// against the oracle: newest first (oldest first when ascending), ties by
// id, across collections, filtered and paged.
func testOracleListing(t *testing.T, s *vector.Store, ds dataset) {
	both := []string{"big", "side"}
	for _, tc := range []struct {
		name          string
		f             vector.Filter
		limit, offset int
		ascending     bool
	}{
		{name: "two collections", f: vector.Filter{Collections: both}, limit: 10},
		{name: "two collections, a page inside the side rows", f: vector.Filter{Collections: both}, limit: 25, offset: 4900},
		{name: "two collections, filtered", f: vector.Filter{Collections: both, Tags: []string{"half"}}, limit: 30, offset: 2440},
		{name: "two collections, readable note", f: vector.Filter{Collections: both, ReadableTypes: []string{"note"}}, limit: 30, offset: 100},
		{name: "one collection, readable none", f: vector.Filter{Collections: []string{"big"}, ReadableTypes: []string{}}, limit: 20, offset: 7},
		{name: "two collections, oldest first", f: vector.Filter{Collections: both}, limit: 20, offset: 5, ascending: true},
		{name: "one collection", f: vector.Filter{Collections: []string{"side"}}, limit: 10, offset: 3},
		{name: "a collection without rows", f: vector.Filter{Collections: []string{"big", "none", "side"}}, limit: 10, offset: 95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.UserID = alice
			var all []vector.Memory
			for _, m := range ds.all {
				if ds.passes(m, f) {
					all = append(all, m)
				}
			}
			slices.SortFunc(all, func(a, b vector.Memory) int {
				c := b.CreatedAt.Compare(a.CreatedAt)
				if tc.ascending {
					c = -c
				}
				return cmp.Or(c, strings.Compare(a.ID, b.ID))
			})
			want := all[min(tc.offset, len(all)):min(tc.offset+tc.limit, len(all))]
			res := search(t, s, vector.Query{Filter: f, Sort: vector.SortCreatedAt, Ascending: tc.ascending, Limit: tc.limit, Offset: tc.offset})
			var got, wantIDs []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
			}
			for _, m := range want {
				wantIDs = append(wantIDs, m.ID)
			}
			if len(wantIDs) == 0 || !slices.Equal(got, wantIDs) {
				t.Errorf("listing %v (offset %d, limit %d):\n got %v\nwant %v", f, tc.offset, tc.limit, got, wantIDs)
			}
			if res.Total != len(all) {
				t.Errorf("total %d, want %d", res.Total, len(all))
			}
			// Without a total: the same page, and neither a total nor
			// HasMore.
			res = search(t, s, vector.Query{Filter: f, Sort: vector.SortCreatedAt, Ascending: tc.ascending, Limit: tc.limit, Offset: tc.offset, NoTotal: true})
			if got := hitIDs(res.Hits); !slices.Equal(got, wantIDs) || res.Total != 0 || res.HasMore {
				t.Errorf("listing %v without a total (offset %d, limit %d): got %v (total %d, has more %v), want %v (total 0)",
					f, tc.offset, tc.limit, got, res.Total, res.HasMore, wantIDs)
			}
		})
	}
}
