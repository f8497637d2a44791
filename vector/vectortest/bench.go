package vectortest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// BenchConfig describes the data set of Bench. The zero value means the
// issue's benchmark: 100,000 memories of 384 dimensions.
type BenchConfig struct {
	// Rows is the number of memories; 0 means 100,000.
	Rows int
	// Dim is their dimension; 0 means 384.
	Dim int
	// Space, when set, is the space the rows are saved in instead of
	// BenchSpace(Dim), e.g. a real embedder's, so that a service with that
	// embedder searches them (its vectors stay the clustered ones).
	Space vector.Space
	// AfterLoad, when set, runs once the rows are saved and before any
	// search, e.g. to build an index in bulk.
	AfterLoad func(b *testing.B)
	// Searchers, when set, are the stores the searches run on, over the
	// data loaded through the store given to Bench (for instance one per
	// index setting); each becomes a level of sub-benchmarks, and its
	// Metrics are reported with every result.
	Searchers []Searcher
}

// Searcher is a store to search with, and metrics that describe it.
type Searcher struct {
	Name    string
	Store   *vector.Store
	Metrics map[string]float64
}

// The user and collection Bench loads its rows into.
const (
	BenchUser       = alice
	BenchCollection = "bench"
)

// BenchSpace is the space of Bench's vectors of dimension dim. A driver
// that builds indexes in bulk records it before Bench loads the rows.
func BenchSpace(dim int) vector.Space {
	return vector.Space{Embedder: "bench:clustered", Dimension: dim}
}

// benchData generates clustered unit vectors, like real embeddings: 1,000
// centres, each row its centre plus noise (cosine to its centre ≈ 0.86).
// Row i has the tag "p1" when i%100 == 0 and "p10" when i%10 == 0, and the
// word fruit[i%10] and the word "w<i%100>" in its text.
type benchData struct {
	centres [][]float32
	vecs    []float32 // rows × dim
	dim     int
	ids     []string
	r       *rand.Rand
}

func newBenchData(rows, dim int) *benchData {
	d := &benchData{dim: dim, r: rand.New(rand.NewPCG(7, 7)), vecs: make([]float32, 0, rows*dim)}
	for range 1000 {
		d.centres = append(d.centres, randomVector(d.r, dim))
	}
	for i := range rows {
		d.vecs = append(d.vecs, d.near(d.centres[i%len(d.centres)])...)
		d.ids = append(d.ids, fmt.Sprintf("mem_bench_%06d", i))
	}
	return d
}

// near returns a unit vector near c.
func (d *benchData) near(c []float32) []float32 {
	v := make([]float32, d.dim)
	scale := 0.6 / math.Sqrt(float64(d.dim))
	var ss float64
	for i := range v {
		x := float64(c[i]) + d.r.NormFloat64()*scale
		v[i] = float32(x)
		ss += x * x
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func (d *benchData) row(i int) []float32 { return d.vecs[i*d.dim : (i+1)*d.dim] }

// exactTop returns the ids of the k rows most similar to q among those for
// which keep is true: the ground truth of recall.
func (d *benchData) exactTop(q []float32, k int, keep func(i int) bool) []string {
	type sc struct {
		i   int
		sim float32
	}
	var all []sc
	for i := range d.ids {
		if keep == nil || keep(i) {
			var s float32
			for j, x := range d.row(i) {
				s += x * q[j]
			}
			all = append(all, sc{i, s})
		}
	}
	slices.SortFunc(all, func(a, b sc) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(d.ids[a.i], d.ids[b.i])
	})
	out := make([]string, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, d.ids[s.i])
	}
	return out
}

// Bench loads the data set into s and benchmarks searches of the top 10:
// unfiltered, filtered to 1% and to 10% of rows (vector signal only, so
// that recall@10 against the exact answer is meaningful), and hybrid
// (vector plus a text query whose words match 1% and 10% of rows). Each sub-benchmark
// reports p50-ms, p95-ms and recall@10; run it with a fixed -benchtime
// such as 200x.
func Bench(b *testing.B, s *vector.Store, cfg BenchConfig) {
	data := load(b, s, cfg)
	dim := data.dim
	const nq = 200
	queries := make([][]float32, nq)
	for i := range queries {
		queries[i] = data.near(data.centres[data.r.IntN(len(data.centres))])
	}
	truths := map[string][][]string{}
	truth := func(tag string) [][]string {
		if t, ok := truths[tag]; ok {
			return t
		}
		var keep func(int) bool
		switch tag {
		case "p1":
			keep = func(i int) bool { return i%100 == 0 }
		case "p10":
			keep = func(i int) bool { return i%10 == 0 }
		}
		out := make([][]string, nq)
		for i, q := range queries {
			out[i] = data.exactTop(q, 10, keep)
		}
		truths[tag] = out
		return out
	}
	searchers := cfg.Searchers
	if len(searchers) == 0 {
		searchers = []Searcher{{Store: s}}
	}
	for _, sr := range searchers {
		if sr.Name == "" {
			benchSearches(b, sr, queries, truth, dim)
			continue
		}
		b.Run(sr.Name, func(b *testing.B) { benchSearches(b, sr, queries, truth, dim) })
	}
}

// Load saves Bench's data set (cfg.Rows memories of cfg.Dim dimensions,
// clustered, tagged p1 and p10, in BenchCollection of BenchUser) into s,
// for benchmarks of their own over it.
func Load(b *testing.B, s *vector.Store, cfg BenchConfig) { load(b, s, cfg) }

func load(b *testing.B, s *vector.Store, cfg BenchConfig) *benchData {
	rows, dim := cmp.Or(cfg.Rows, 100_000), cmp.Or(cfg.Dim, 384)
	space := cfg.Space
	if space.Embedder == "" {
		space = BenchSpace(dim)
	}
	start := time.Now()
	data := newBenchData(rows, dim)
	const batch = 5000
	for lo := 0; lo < rows; lo += batch {
		var ms []vector.Memory
		for i := lo; i < min(lo+batch, rows); i++ {
			m := vector.Memory{
				ID: data.ids[i], UserID: BenchUser, Collection: BenchCollection, Embedding: data.row(i),
				Text:      fmt.Sprintf("memory %d about %s and w%d", i, fruit[i%10], i%100),
				CreatedAt: epoch.Add(time.Duration(i) * time.Second),
			}
			if i%100 == 0 {
				m.Tags = append(m.Tags, "p1")
			}
			if i%10 == 0 {
				m.Tags = append(m.Tags, "p10")
			}
			ms = append(ms, m)
		}
		if _, err := s.Save(b.Context(), space, ms...); err != nil {
			b.Fatalf("load: %v", err)
		}
	}
	if cfg.AfterLoad != nil {
		cfg.AfterLoad(b)
	}
	b.Logf("loaded %d memories of %d dimensions in %s", rows, dim, time.Since(start).Round(time.Millisecond))
	return data
}

// benchSearches runs the search sub-benchmarks on one searcher.
func benchSearches(b *testing.B, sr Searcher, queries [][]float32, truth func(tag string) [][]string, dim int) {
	nq := len(queries)
	s := sr.Store
	for _, tc := range []struct {
		name, tag, text string
	}{
		{"unfiltered", "", noMatchText},
		{"filter_1pct", "p1", noMatchText},
		{"filter_10pct", "p10", noMatchText},
		{"hybrid", "", "w42 kiwi"},
	} {
		want := truth(tc.tag)
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			var found, total int
			i := 0
			for b.Loop() {
				qi := i % nq
				i++
				q := vector.Query{
					Filter: vector.Filter{UserID: BenchUser, Collections: []string{BenchCollection}}, Text: tc.text,
					Vector: queries[qi], Space: BenchSpace(dim), MinSimilarity: ptr(-1.0), Limit: 10,
				}
				if tc.tag != "" {
					q.Tags = []string{tc.tag}
				}
				t0 := time.Now()
				res, err := s.Search(b.Context(), q)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if tc.text == noMatchText {
					got := hitIDs(res.Hits)
					for _, id := range want[qi] {
						total++
						if slices.Contains(got, id) {
							found++
						}
					}
				}
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
			if total > 0 {
				b.ReportMetric(float64(found)/float64(total), "recall@10")
			}
			for name, v := range sr.Metrics {
				b.ReportMetric(v, name)
			}
		})
	}
}
