package knowledge

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// topByBase keeps exactly the first k of every candidate sorted by base
// score, ties by index, in that order, including when ties straddle the
// k-th place.
func TestTopByBaseIsTheSortedPrefix(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		n := 2 + rnd.IntN(3000)
		k := 1 + rnd.IntN(n-1)
		distinct := 1 + rnd.IntN(50) // few distinct scores: many ties
		if trial%3 == 0 {
			distinct = n
		}
		r := &ranking{base: make([]float64, n)}
		for i := range r.base {
			r.base[i] = float64(rnd.IntN(distinct)) / float64(distinct)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		slices.SortFunc(all, func(a, b int) int { return cmp.Or(cmp.Compare(r.base[b], r.base[a]), cmp.Compare(a, b)) })
		if got := r.topByBase(k); !slices.Equal(got, all[:k]) {
			t.Fatalf("n %d, k %d, %d distinct scores: topByBase differs from the sorted prefix\n got %v\nwant %v", n, k, distinct, got, all[:k])
		}
	}
}

func TestKthLargest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	for range 500 {
		n := 1 + rnd.IntN(200)
		xs := make([]float64, n)
		distinct := 1 + rnd.IntN(n)
		for i := range xs {
			xs[i] = float64(rnd.IntN(distinct))
		}
		if rnd.IntN(4) == 0 {
			slices.Sort(xs) // sorted input, ascending or not
			if rnd.IntN(2) == 0 {
				slices.Reverse(xs)
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		k := 1 + rnd.IntN(n)
		if got, want := kthLargest(slices.Clone(xs), k), sorted[n-k]; got != want {
			t.Fatalf("kthLargest(%v, %d) = %v, want %v", xs, k, got, want)
		}
	}
}
