package pgvector

import (
	"testing"

	"github.com/cairnkg/cairn/vector"
)

// TestTrusted checks the rule that sends an index answer to an exact scan,
// on the figures of the benchmark's data sets: 100,000 rows of 384
// dimensions, whose random similarities have a standard deviation of
// 1/sqrt(384) ≈ 0.051 around 0.
func TestTrusted(t *testing.T) {
	answer := func(tenth float64) []vector.Scored {
		out := make([]vector.Scored, 100)
		for i := range out {
			out[i] = vector.Scored{ID: "m", Score: tenth + 0.01*float64(9-i)}
		}
		return out
	}
	tests := []struct {
		name             string
		opts             Options
		out              []vector.Scored
		mean, sd, tuples float64
		want             bool
	}{
		// Uniform vectors: the 10th nearest of 100,000 is at about 0.19,
		// 3.7 standard deviations out, where chance puts it.
		{name: "uniform", out: answer(0.19), mean: 0, sd: 0.051, tuples: 1e5, want: false},
		// Clustered ones: the 10th nearest shares the query's cluster.
		{name: "clustered", out: answer(0.74), mean: 0, sd: 0.051, tuples: 1e5, want: true},
		{name: "just above chance and contrast", out: answer(0.051*5.3 + 0.001), sd: 0.051, tuples: 1e5, want: true},
		{name: "just below", out: answer(0.051*5.28 - 0.001), sd: 0.051, tuples: 1e5, want: false},
		// A table never analysed counts as a million rows.
		{name: "unknown size", out: answer(0.051 * 5.5), sd: 0.051, tuples: -1, want: false},
		{name: "check off", opts: Options{Contrast: -1}, out: answer(0.19), sd: 0.051, tuples: 1e5, want: true},
		{name: "fewer than 10 rows", out: answer(0.19)[:9], sd: 0.051, tuples: 1e5, want: true},
		{name: "no spread", out: answer(0.19), sd: 0, tuples: 1e5, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(nil, tc.opts)
			if got := d.trusted(tc.out, tc.mean, tc.sd, tc.tuples); got != tc.want {
				t.Errorf("trusted = %v, want %v", got, tc.want)
			}
		})
	}
}
