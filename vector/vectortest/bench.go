package vectortest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// BenchConfig describes the data set of Bench. The zero value means the
// issue's benchmark: 100,000 clustered memories of 384 dimensions.
type BenchConfig struct {
	// Rows is the number of memories; 0 means 100,000.
	Rows int
	// Dim is their dimension; 0 means 384.
	Dim int
	// Data is how the vectors are spread; the zero value is Clustered.
	Data BenchData
	// Space, when set, is the space the rows are saved in instead of
	// BenchSpace(Dim), e.g. a real embedder's, so that a service with that
	// embedder searches them (its vectors stay the generated ones).
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

// BenchData names how Bench's vectors are spread.
type BenchData string

// The data sets of Bench.
const (
	// Clustered vectors are like real embeddings: 1,000 centres, each row
	// its centre plus noise (cosine to its centre ≈ 0.86); queries are
	// near a random centre.
	Clustered BenchData = "clustered"
	// Uniform vectors are uniformly random on the unit sphere, as are the
	// queries: no row is much nearer a query than the others (in 384
	// dimensions the 10th nearest of 100,000 has a cosine of about 0.18,
	// the median row 0), the worst case of an approximate index.
	Uniform BenchData = "uniform"
)

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

// BenchFilters are the filters of Bench: the tag a row carries when it is
// in the filter, and the share of rows that carry it. A row's tags do not
// depend on its vector (they come from a random permutation of the rows),
// and each set holds the smaller ones.
var BenchFilters = []struct {
	Tag   string
	Share float64
}{
	{"p0.1", 0.001}, {"p1", 0.01}, {"p10", 0.1}, {"p50", 0.5},
}

// benchText is the query text of Bench's hybrid searches: its words are
// on 10% (kiwi) and 1% (w42) of rows.
const benchText = "w42 kiwi"

// benchData is Bench's data set. Row i has the word fruit[i%10] and the
// word "w<i%100>" in its text, and the tags of BenchFilters its rank in a
// random permutation puts it in.
type benchData struct {
	kind    BenchData
	centres [][]float32
	vecs    []float32 // rows × dim
	dim     int
	ids     []string
	rank    []int // row → its place in a random permutation
	r       *rand.Rand
}

func newBenchData(kind BenchData, rows, dim int) *benchData {
	d := &benchData{kind: kind, dim: dim, r: rand.New(rand.NewPCG(7, 7)), vecs: make([]float32, 0, rows*dim)}
	if kind == Clustered {
		for range 1000 {
			d.centres = append(d.centres, randomVector(d.r, dim))
		}
	}
	for i := range rows {
		if kind == Clustered {
			d.vecs = append(d.vecs, d.near(d.centres[i%len(d.centres)])...)
		} else {
			d.vecs = append(d.vecs, randomVector(d.r, dim)...)
		}
		d.ids = append(d.ids, fmt.Sprintf("mem_bench_%06d", i))
	}
	d.rank = d.r.Perm(rows)
	return d
}

// query returns a query vector of the data set's kind.
func (d *benchData) query() []float32 {
	if d.kind == Clustered {
		return d.near(d.centres[d.r.IntN(len(d.centres))])
	}
	return randomVector(d.r, d.dim)
}

// tags returns the tags of row i.
func (d *benchData) tags(i int) []string {
	var out []string
	for _, f := range BenchFilters {
		if d.in(i, f.Share) {
			out = append(out, f.Tag)
		}
	}
	return out
}

// in reports whether row i is in the filter keeping share of rows.
func (d *benchData) in(i int, share float64) bool {
	return share == 1 || d.rank[i] < int(share*float64(len(d.ids)))
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

// exactTop returns, for each share of rows, the ids of the k rows most
// similar to q among those in the filter keeping that share: the ground
// truth of recall.
func (d *benchData) exactTop(q []float32, k int, shares []float64) [][]string {
	type sc struct {
		i   int
		sim float32
	}
	all := make([]sc, len(d.ids))
	for i := range d.ids {
		var s float32
		for j, x := range d.row(i) {
			s += x * q[j]
		}
		all[i] = sc{i, s}
	}
	slices.SortFunc(all, func(a, b sc) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(d.ids[a.i], d.ids[b.i])
	})
	out := make([][]string, len(shares))
	for si, share := range shares {
		for _, s := range all {
			if len(out[si]) == k {
				break
			}
			if d.in(s.i, share) {
				out[si] = append(out[si], d.ids[s.i])
			}
		}
	}
	return out
}

// benchQueries is the number of distinct queries of each sub-benchmark;
// they repeat when -benchtime asks for more.
const benchQueries = 200

// Bench loads the data set into s and benchmarks searches of the top 10,
// unfiltered and with each of BenchFilters, each twice: vector signal only
// (a text no row contains, so that recall@10 against the exact answer is
// meaningful) and hybrid (vector plus benchText). Each sub-benchmark
// reports p50-ms, p95-ms, recall@10 (vector only) and short, the share of
// searches that returned fewer than 10 hits (every filter keeps at least
// 100 rows, so any is a fault). Run it with a fixed -benchtime such as
// 200x.
func Bench(b *testing.B, s *vector.Store, cfg BenchConfig) {
	data := load(b, s, cfg)
	start := time.Now()
	queries := make([][]float32, benchQueries)
	for i := range queries {
		queries[i] = data.query()
	}
	shares := []float64{1}
	for _, f := range BenchFilters {
		shares = append(shares, f.Share)
	}
	// truth[qi][si]: the exact top 10 of query qi in shares[si].
	truth := make([][][]string, len(queries))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for qi := range next {
				truth[qi] = data.exactTop(queries[qi], 10, shares)
			}
		})
	}
	for qi := range queries {
		next <- qi
	}
	close(next)
	wg.Wait()
	b.Logf("computed the exact answers of %d queries in %s", len(queries), time.Since(start).Round(time.Millisecond))
	searchers := cfg.Searchers
	if len(searchers) == 0 {
		searchers = []Searcher{{Store: s}}
	}
	for _, sr := range searchers {
		if sr.Name == "" {
			benchSearches(b, sr, queries, truth, data.dim)
			continue
		}
		b.Run(sr.Name, func(b *testing.B) { benchSearches(b, sr, queries, truth, data.dim) })
	}
}

// Load saves Bench's data set (cfg.Rows memories of cfg.Dim dimensions,
// spread as cfg.Data says, tagged as BenchFilters says, in BenchCollection
// of BenchUser) into s, for benchmarks of their own over it.
func Load(b *testing.B, s *vector.Store, cfg BenchConfig) { load(b, s, cfg) }

func load(b *testing.B, s *vector.Store, cfg BenchConfig) *benchData {
	rows, dim := cmp.Or(cfg.Rows, 100_000), cmp.Or(cfg.Dim, 384)
	space := cfg.Space
	if space.Embedder == "" {
		space = BenchSpace(dim)
	}
	start := time.Now()
	data := newBenchData(cmp.Or(cfg.Data, Clustered), rows, dim)
	const batch = 5000
	for lo := 0; lo < rows; lo += batch {
		var ms []vector.Memory
		for i := lo; i < min(lo+batch, rows); i++ {
			ms = append(ms, vector.Memory{
				ID: data.ids[i], UserID: BenchUser, Collection: BenchCollection, Embedding: data.row(i),
				Text:      fmt.Sprintf("memory %d about %s and w%d", i, fruit[i%10], i%100),
				CreatedAt: epoch.Add(time.Duration(i) * time.Second), Tags: data.tags(i),
			})
		}
		if _, err := s.Save(b.Context(), space, ms...); err != nil {
			b.Fatalf("load: %v", err)
		}
	}
	b.Logf("saved %d %s memories of %d dimensions in %s", rows, data.kind, dim, time.Since(start).Round(time.Millisecond))
	if cfg.AfterLoad != nil {
		start := time.Now()
		cfg.AfterLoad(b)
		b.Logf("after the load: %s", time.Since(start).Round(time.Millisecond))
	}
	return data
}

// benchSearches runs the search sub-benchmarks on one searcher.
func benchSearches(b *testing.B, sr Searcher, queries [][]float32, truth [][][]string, dim int) {
	nq := len(queries)
	type filter struct {
		name, tag string
		share     int // index into truth's shares
	}
	filters := []filter{{"unfiltered", "", 0}}
	for i, f := range BenchFilters {
		filters = append(filters, filter{"filter_" + f.Tag + "pct", f.Tag, i + 1})
	}
	for _, mode := range []string{"vector", "hybrid"} {
		for _, f := range filters {
			b.Run(mode+"/"+f.name, func(b *testing.B) {
				var lat []time.Duration
				var found, total, short, searches int
				i := 0
				for b.Loop() {
					qi := i % nq
					i++
					q := vector.Query{
						Filter: vector.Filter{UserID: BenchUser, Collections: []string{BenchCollection}}, Text: noMatchText,
						Vector: queries[qi], Space: BenchSpace(dim), MinSimilarity: ptr(-1.0), Limit: 10,
					}
					if mode == "hybrid" {
						q.Text = benchText
					}
					if f.tag != "" {
						q.Tags = []string{f.tag}
					}
					t0 := time.Now()
					res, err := sr.Store.Search(b.Context(), q)
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					searches++
					if len(res.Hits) < 10 {
						short++
					}
					if mode == "vector" {
						got := hitIDs(res.Hits)
						for _, id := range truth[qi][f.share] {
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
				b.ReportMetric(float64(short)/float64(searches), "short")
				for name, v := range sr.Metrics {
					b.ReportMetric(v, name)
				}
			})
		}
	}
}
