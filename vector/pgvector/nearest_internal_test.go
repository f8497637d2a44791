package pgvector

import (
	"cmp"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/vector"
)

// TestTrusted checks the rule that sends an index answer to an exact scan
// on the neighbourhoods it is meant to tell apart: the 100 nearest of
// 20,000 vectors of 384 dimensions, uniformly spread or clustered like the
// benchmark's (100 clusters of rows at cosine 0.86 to their centre), with
// and without a filter keeping 10% of the rows.
func TestTrusted(t *testing.T) {
	const dim, rows, k = 384, 20000, 100
	r := rand.New(rand.NewPCG(1, 2))
	unit := func(v []float64) []float64 {
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		for i := range v {
			v[i] /= math.Sqrt(ss)
		}
		return v
	}
	random := func() []float64 {
		v := make([]float64, dim)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return unit(v)
	}
	near := func(c []float64) []float64 {
		v := make([]float64, dim)
		for i := range v {
			v[i] = c[i] + r.NormFloat64()*0.6/math.Sqrt(dim)
		}
		return unit(v)
	}
	var centres [][]float64
	for range 100 {
		centres = append(centres, random())
	}
	uniform, clustered := make([][]float64, rows), make([][]float64, rows)
	for i := range rows {
		uniform[i], clustered[i] = random(), near(centres[i%len(centres)])
	}
	// answer is the exact top k of q among the rows that keep admits.
	answer := func(data [][]float64, q []float64, keep func(int) bool) []vector.Scored {
		var out []vector.Scored
		for i, v := range data {
			if keep(i) {
				var dot float64
				for j := range v {
					dot += v[j] * q[j]
				}
				out = append(out, vector.Scored{ID: "m", Score: dot})
			}
		}
		slices.SortFunc(out, func(a, b vector.Scored) int { return cmp.Compare(b.Score, a.Score) })
		return out[:k]
	}
	all := func(int) bool { return true }
	// Row i is in cluster i%100; the filter takes every row of one block
	// of 100 in ten, so that it keeps 10% of each cluster.
	tenth := func(i int) bool { return (i/100)%10 == 3 }
	d := New(nil, Options{})
	for qi := range 5 {
		for _, tc := range []struct {
			name string
			out  []vector.Scored
			want bool
		}{
			{"uniform", answer(uniform, random(), all), false},
			{"uniform, 10%", answer(uniform, random(), tenth), false},
			{"clustered", answer(clustered, near(centres[qi]), all), true},
			{"clustered, 10%", answer(clustered, near(centres[qi]), tenth), true},
		} {
			if got := d.trusted(tc.out); got != tc.want {
				t.Errorf("query %d, %s: trusted = %v, want %v", qi, tc.name, got, tc.want)
			}
		}
	}

	// The edges.
	same := make([]vector.Scored, k)
	for i := range same {
		same[i] = vector.Scored{ID: "m", Score: 0.5}
	}
	if d.trusted(same) {
		t.Error("rows all at one distance are trusted; nothing stands out among them")
	}
	dup := slices.Clone(same)
	for i := range dup {
		dup[i].Score = 1
	}
	if !d.trusted(dup) {
		t.Error("duplicates of the query are not trusted")
	}
	if !d.trusted(same[:minLIDRows-1]) {
		t.Error("too few rows to estimate from are not trusted")
	}
	if !New(nil, Options{MaxLID: -1}).trusted(same) {
		t.Error("MaxLID -1 does not keep every answer")
	}
}

func TestTsvCounts(t *testing.T) {
	for _, tc := range []struct {
		in    string
		tf    map[string]int
		total int
	}{
		{"", map[string]int{}, 0},
		{"'appl':1,4 'pie':2B", map[string]int{"appl": 2, "pie": 1}, 3},
		{"'it''s':3 'back\\\\slash':5 'nopos'", map[string]int{"it's": 1, `back\slash`: 1, "nopos": 1}, 3},
	} {
		tf, total := tsvCounts(tc.in)
		if !maps.Equal(tf, tc.tf) || total != tc.total {
			t.Errorf("tsvCounts(%q) = %v, %d; want %v, %d", tc.in, tf, total, tc.tf, tc.total)
		}
	}
}
