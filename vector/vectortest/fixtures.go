package vectortest

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// The users of the suite.
const (
	alice = "alice"
	bob   = "bob"
)

// testSpace is the space of most tests: a small dimension keeps random
// similarities spread over [-1, 1], so thresholds select real subsets.
var testSpace = vector.Space{Embedder: "test:random", Dimension: 32}

// epoch is the suite's reference time.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// randomVector returns a random unit vector of dimension dim.
func randomVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var ss float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		ss += x * x
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// unit returns the unit vector along axis i of dimension dim.
func unit(dim, i int) []float32 {
	v := make([]float32, dim)
	v[i] = 1
	return v
}

// cosine is the exact cosine similarity of a and b, in float64.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func ptr[T any](v T) *T { return &v }

// open returns a store from the harness.
func open(t *testing.T, h Harness) *vector.Store {
	t.Helper()
	return h.Open(t)
}

// save stores memories in space and fails the test on error.
func save(t *testing.T, s *vector.Store, space vector.Space, ms ...vector.Memory) []vector.Memory {
	t.Helper()
	out, err := s.Save(t.Context(), space, ms...)
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	return out
}

// search runs q and fails the test on error.
func search(t *testing.T, s *vector.Store, q vector.Query) vector.Result {
	t.Helper()
	res, err := s.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q.Filter, err)
	}
	return res
}

func hitIDs(hits []vector.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// noMatchText is a query text that no saved text contains, so that only
// the vector signal finds rows.
const noMatchText = "xylophonequux"
