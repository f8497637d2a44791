package vectortest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// recallSpace is the space of the recall test: a dimension of real
// embeddings' order, where uniformly spread vectors have no neighbourhoods
// (the nearest of a few thousand rows is barely nearer than the median
// one) and an approximate index misses most true neighbours.
var recallSpace = vector.Space{Embedder: "test:recall", Dimension: 128}

// recallRows keeps the test cheap while leaving 10 rows in the 1% filter.
const recallRows = 1000

// testRecall checks, on uniformly spread vectors and on clustered ones, at
// a realistic dimension, that a search filtered to 1%, 10% or 50% of the
// rows (or not at all) returns min(limit, matching rows) hits, and that an
// approximate driver still finds at least MinRecall of the exact top 10
// for each filter (an exact driver finds them all, in order). A filter's
// rows are drawn at random, independently of the vectors.
func testRecall(t *testing.T, h Harness) {
	shares := []struct {
		tag   string
		share float64
	}{{"", 1}, {"s1", 0.01}, {"s10", 0.1}, {"s50", 0.5}}
	for _, kind := range []BenchData{Uniform, Clustered} {
		t.Run(string(kind), func(t *testing.T) {
			s := open(t, h)
			r := rand.New(rand.NewPCG(5, 6))
			dim := recallSpace.Dimension
			var centres [][]float32
			for range 30 {
				centres = append(centres, randomVector(r, dim))
			}
			bd := &benchData{kind: kind, dim: dim, r: r, centres: centres}
			vec := func() []float32 {
				if kind == Clustered {
					return bd.near(centres[r.IntN(len(centres))])
				}
				return randomVector(r, dim)
			}
			rank := r.Perm(recallRows)
			ds := dataset{rows: map[string]vector.Memory{}, words: map[string][]string{}}
			var in []vector.Memory
			for i := range recallRows {
				m := vector.Memory{
					ID: fmt.Sprintf("mem_recall_%05d", i), UserID: alice, Collection: "r", Text: "recall row",
					CreatedAt: epoch.Add(time.Duration(i) * time.Second), Embedding: vec(),
				}
				for _, sh := range shares[1:] {
					if rank[i] < int(sh.share*recallRows) {
						m.Tags = append(m.Tags, sh.tag)
					}
				}
				in = append(in, m)
			}
			for _, m := range save(t, s, recallSpace, in...) {
				ds.rows[m.ID] = m
				ds.all = append(ds.all, m)
			}
			queries := make([][]float32, 8)
			for i := range queries {
				queries[i] = vec()
			}
			for _, sh := range shares {
				f := vector.Filter{UserID: alice, Collections: []string{"r"}}
				if sh.tag != "" {
					f.Tags = []string{sh.tag}
				}
				var found, wanted int
				for qi, q := range queries {
					all := ds.exact(f, q, -1)
					want := all[:min(10, len(all))]
					res := search(t, s, vector.Query{
						Filter: f, Text: noMatchText, Vector: q, Space: recallSpace, MinSimilarity: ptr(-1.0), Limit: 10,
					})
					if len(res.Hits) != len(want) {
						t.Fatalf("filter %q, query %d: %d hits, want min(limit, matching rows) = %d", sh.tag, qi, len(res.Hits), len(want))
					}
					got := hitIDs(res.Hits)
					for i, w := range want {
						wanted++
						if slices.Contains(got, w.id) {
							found++
						}
						if !h.Approximate && got[i] != w.id {
							t.Errorf("filter %q, query %d: hit %d is %s, the exact search has %s", sh.tag, qi, i, got[i], w.id)
						}
					}
				}
				recall := float64(found) / float64(wanted)
				t.Logf("filter %q (%v of the rows): recall@10 %.3f", sh.tag, sh.share, recall)
				if recall < MinRecall {
					t.Errorf("filter %q (%v of the rows): recall@10 %.3f, want at least %v", sh.tag, sh.share, recall, MinRecall)
				}
			}
		})
	}
}
