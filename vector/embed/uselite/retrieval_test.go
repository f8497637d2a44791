package uselite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embed/bge"
	"github.com/cairnkg/cairn/vector/embed/minilm"
	"github.com/cairnkg/cairn/vector/embed/uselite"
	"github.com/cairnkg/cairn/vector/embedded"
)

// retrievalSet is testdata/retrieval.json: queries that share no content
// word with the memory they should find, and distractors.
type retrievalSet struct {
	Source string `json:"source"`
	Pairs  []struct {
		Query  string `json:"query"`
		Memory string `json:"memory"`
	} `json:"pairs"`
	Distractors []string `json:"distractors"`
}

// TestRetrievalQuality measures recall@1 and recall@5 of the lexical
// embedder and of the model, by vector similarity alone and by Cairn's
// hybrid search (vector and full text fused, on the embedded store, with
// each embedder's default minSimilarity), and the similarities of the
// right memory and of the best wrong one, from which the model's default
// threshold was chosen; the same for the MiniLM and bge models when they
// are built in. Run with -v to see the figures (docs/memories.md
// quotes them). It checks only that the model is not worse than the
// lexical embedder.
func TestRetrievalQuality(t *testing.T) {
	model, err := uselite.New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("model files not built in; run scripts/provision-model.sh")
	}
	raw, err := os.ReadFile("testdata/retrieval.json")
	if err != nil {
		t.Fatal(err)
	}
	var set retrievalSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	var memories, queries []string
	for _, p := range set.Pairs {
		memories = append(memories, p.Memory)
		queries = append(queries, p.Query)
	}
	memories = append(memories, set.Distractors...)
	ctx := context.Background()
	recall := map[string][2]float64{}
	embedders := []embed.Embedder{embed.NewLocal(), model}
	// The MiniLM model, when built in, is measured on the same set, so
	// that the two models' figures and thresholds compare (not under the
	// race detector, where it alone takes some 4 s).
	if m, err := minilm.New(); err == nil && !raceEnabled {
		embedders = append(embedders, m)
	}
	if m, err := bge.New(); err == nil && !raceEnabled {
		embedders = append(embedders, m)
	}
	for _, e := range embedders {
		mv, err := e.Embed(ctx, memories)
		if err != nil {
			t.Fatal(err)
		}
		qv, err := e.Embed(ctx, queries)
		if err != nil {
			t.Fatal(err)
		}
		// By vector similarity alone.
		var at1, at5 int
		var right, wrong []float64
		for qi, q := range qv {
			type scored struct {
				i   int
				sim float64
			}
			var s []scored
			for mi, m := range mv {
				s = append(s, scored{mi, dot(q, m)})
			}
			sort.SliceStable(s, func(a, b int) bool { return s[a].sim > s[b].sim })
			rank := slices.IndexFunc(s, func(x scored) bool { return x.i == qi })
			if rank == 0 {
				at1++
			}
			if rank < 5 {
				at5++
			}
			right = append(right, s[rank].sim)
			for _, x := range s {
				if x.i != qi {
					wrong = append(wrong, x.sim)
					break
				}
			}
		}
		n := float64(len(qv))
		minSim := vector.DefaultMinSimilarity
		if th, ok := e.(embed.Thresholder); ok {
			minSim = th.MinSimilarity()
		}
		t.Logf("%s vector: recall@1 %.2f, recall@5 %.2f; similarity of the right memory: median %.2f, min %.2f; of the best wrong one: median %.2f, max %.2f",
			e.Name(), float64(at1)/n, float64(at5)/n, median(right), slices.Min(right), median(wrong), slices.Max(wrong))
		recall[e.Name()] = [2]float64{float64(at1) / n, float64(at5) / n}
		// Hybrid: Cairn's own search on the embedded store.
		h1, h5 := hybrid(t, e, memories, mv, queries, qv, minSim)
		t.Logf("%s hybrid (minSimilarity %.2f): recall@1 %.2f, recall@5 %.2f", e.Name(), minSim, h1, h5)
	}
	if recall[model.Name()][1] < recall[embed.NewLocal().Name()][1] {
		t.Errorf("the model's recall@5 %.2f is below the lexical embedder's %.2f", recall[model.Name()][1], recall[embed.NewLocal().Name()][1])
	}
}

func hybrid(t *testing.T, e embed.Embedder, memories []string, mv [][]float32, queries []string, qv [][]float32, minSim float64) (float64, float64) {
	t.Helper()
	ctx := context.Background()
	s := vector.NewStore(embedded.New(sqlitetest.Open(t)))
	defer s.Close()
	space := vector.Space{Embedder: e.Name(), Dimension: e.Dimension()}
	ms := make([]vector.Memory, len(memories))
	for i, text := range memories {
		ms[i] = vector.Memory{ID: fmt.Sprintf("m%03d", i), UserID: "u", Collection: "c", Text: text, Embedding: mv[i]}
	}
	if _, err := s.Save(ctx, space, ms...); err != nil {
		t.Fatal(err)
	}
	var at1, at5 int
	for qi, q := range queries {
		res, err := s.Search(ctx, vector.Query{
			Filter: vector.Filter{UserID: "u", Collections: []string{"c"}},
			Text:   q, Vector: qv[qi], Space: space, MinSimilarity: &minSim, Limit: 5,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("m%03d", qi)
		for rank, h := range res.Hits {
			if h.Memory.ID == want {
				if rank == 0 {
					at1++
				}
				at5++
			}
		}
	}
	n := float64(len(queries))
	return float64(at1) / n, float64(at5) / n
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}
