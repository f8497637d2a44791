package vector_test

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/internal/dot"
)

func TestPackInt8(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"zero", make([]float32, 5)},
		{"unit", []float32{1, 0, 0}},
		{"mixed", []float32{0.5, -0.25, 0.125, -1e-9, 0.0625}},
		{"large", []float32{3e30, -1e30, 2}},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := vector.PackInt8(tc.v)
			if len(b) != 4+len(tc.v) {
				t.Fatalf("packed %d components into %d bytes", len(tc.v), len(b))
			}
			got, err := vector.UnpackInt8(b, len(tc.v))
			if err != nil {
				t.Fatal(err)
			}
			var maxAbs float64
			for _, x := range tc.v {
				maxAbs = max(maxAbs, math.Abs(float64(x)))
			}
			step := maxAbs / 127
			for i, x := range tc.v {
				if d := math.Abs(float64(got[i]) - float64(x)); d > step/2*1.0001+1e-30 {
					t.Errorf("component %d: %v read back as %v, off by %v, more than half a step (%v)", i, x, got[i], d, step/2)
				}
			}
			// Packing what was read back gives the same bytes: a vector
			// stored again is stored unchanged.
			if again := vector.PackInt8(got); !slices.Equal(again, b) {
				t.Errorf("packing the unpacked vector gives %v, want %v", again, b)
			}
		})
	}
	if _, err := vector.UnpackInt8(make([]byte, 7), 4); err == nil {
		t.Error("UnpackInt8 accepted 7 bytes for 4 dimensions")
	}
}

// TestInt8Recall measures what storing entity embeddings at 8 bits costs
// the searches that read them: over 10,000 entity texts embedded by the
// local embedder, the nearest neighbours (cosine) of topic-like queries
// under the packed vectors against those under the float32 ones. The
// query stays float32, as in topic ranking. A neighbour whose float32
// similarity ties the last one counts as found: among equals any order is
// right. It fails below 0.97 recall@10; the figures are logged (go test
// -v -run Int8Recall ./vector) and quoted in docs/performance.md.
func TestInt8Recall(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds 10,000 texts")
	}
	const n, queries = 10000, 100
	r := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields(`alpha beta gamma delta project invoice contract meeting berlin paris lyon zurich acme globex
		initech umbrella anvil rocket budget review launch quarterly hiring design research sales support legal audit
		garden kitchen travel train flight hotel dentist doctor school piano guitar football tennis chess novel poem
		ocean river mountain forest desert island bridge tower castle market bakery coffee tea wine cheese bread
		apple banana cherry grape lemon mango olive peach plum tomato carrot potato onion garlic pepper salt sugar`)
	types := []string{"person", "company", "task", "project", "place", "event"}
	texts := make([]string, n)
	for i := range texts {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s %s %d", types[r.IntN(len(types))], words[r.IntN(len(words))], words[r.IntN(len(words))], i)
		for range 1 + r.IntN(4) {
			fmt.Fprintf(&b, "; %s", words[r.IntN(len(words))])
		}
		texts[i] = b.String()
	}
	e := embed.NewLocal()
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	packed := make([][]float32, n)
	bytes32, bytes8 := 0, 0
	for i, v := range vecs {
		packed[i] = vector.RoundInt8(v)
		bytes32, bytes8 = bytes32+4*len(v), bytes8+len(vector.PackInt8(v))
	}
	qs := make([]string, queries)
	for i := range qs {
		qs[i] = strings.Join([]string{words[r.IntN(len(words))], words[r.IntN(len(words))]}[:1+r.IntN(2)], " ")
	}
	qvecs, err := e.Embed(t.Context(), qs)
	if err != nil {
		t.Fatal(err)
	}
	norm(vecs)
	norm(packed)
	norm(qvecs)
	var hits10, strict10, hits20, strict20 float64
	for _, q := range qvecs {
		exact, approx := sims(q, vecs), sims(q, packed)
		// The top 10 is the top 20's first half (topK orders ties by index).
		want20, got20 := topK(exact, 20), topK(approx, 20)
		for _, k := range []int{10, 20} {
			want, got := want20[:k], got20[:k]
			kth := exact[want[k-1]]
			in := map[int]bool{}
			for _, i := range want {
				in[i] = true
			}
			hits, strict := &hits10, &strict10
			if k == 20 {
				hits, strict = &hits20, &strict20
			}
			for _, i := range got {
				if in[i] {
					*strict++
				}
				if in[i] || exact[i] >= kth-1e-6 {
					*hits++
				}
			}
		}
	}
	recall := func(k int) (tieAware, strict float64) {
		d := float64(len(qvecs) * k)
		if k == 10 {
			return hits10 / d, strict10 / d
		}
		return hits20 / d, strict20 / d
	}
	r10, s10 := recall(10)
	r20, s20 := recall(20)
	t.Logf("%d entity vectors of %d dimensions: %d bytes as float32, %d packed (%.1f%%)", n, e.Dimension(), bytes32, bytes8,
		100*float64(bytes8)/float64(bytes32))
	t.Logf("recall@10 %.4f (%.4f counting ties as misses); top-20 overlap %.4f (%.4f)", r10, s10, r20, s20)
	if r10 < 0.97 {
		t.Errorf("recall@10 = %.4f, want at least 0.97", r10)
	}
}

// norm scales every vector to unit length, so that cosine is a dot
// product.
func norm(vs [][]float32) {
	for _, v := range vs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
}

// sims returns the cosine of q with every vector of vs, all of unit length.
func sims(q []float32, vs [][]float32) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = float64(dot.Product(v, q))
	}
	return out
}

// topK returns the indexes of the k highest similarities, best first.
func topK(sim []float64, k int) []int {
	idx := make([]int, len(sim))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(sim[b], sim[a]), cmp.Compare(a, b)) })
	return idx[:k]
}

// DotInt8 adds up exactly what a loop over the unpacked vector would: a
// context load's ranking is the same whether it unpacks or not.
func TestDotInt8MatchesUnpacked(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 7, 384, 512} {
		for range 50 {
			a, v := make([]float32, dim), make([]float32, dim)
			for i := range a {
				a[i], v[i] = float32(rnd.NormFloat64()), float32(rnd.NormFloat64()*rnd.Float64())
			}
			packed := vector.PackInt8(v)
			u, err := vector.UnpackInt8(packed, dim)
			if err != nil {
				t.Fatal(err)
			}
			var wantDot, wantSq float64
			for i := range a {
				x, y := float64(a[i]), float64(u[i])
				wantDot += x * y
				wantSq += y * y
			}
			dot, sq, ok := vector.DotInt8(a, packed)
			if !ok || dot != wantDot || sq != wantSq {
				t.Fatalf("dim %d: DotInt8 = %v, %v, %v; unpacked %v, %v", dim, dot, sq, ok, wantDot, wantSq)
			}
		}
	}
	if dot, sq, ok := vector.DotInt8([]float32{1, 2}, vector.PackInt8([]float32{0, 0})); !ok || dot != 0 || sq != 0 {
		t.Errorf("zero vector: %v, %v, %v", dot, sq, ok)
	}
	for _, b := range [][]byte{nil, {1, 2, 3}, vector.PackInt8([]float32{1, 2, 3})} {
		if _, _, ok := vector.DotInt8([]float32{1, 2}, b); ok {
			t.Errorf("DotInt8 of %d bytes for 2 components: ok", len(b))
		}
	}
}

// TestPackInt8OfUnpacked checks that packing a vector read back from its
// packed form gives the same bytes: a stored entity embedding (packed,
// returned unpacked) and the cache's packed copy of it then score alike,
// which entity search by meaning relies on.
func TestPackInt8OfUnpacked(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	for range 2000 {
		v := make([]float32, 384)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
		b := vector.PackInt8(v)
		u, err := vector.UnpackInt8(b, len(v))
		if err != nil {
			t.Fatal(err)
		}
		if again := vector.PackInt8(u); !bytes.Equal(again, b) {
			t.Fatalf("PackInt8(UnpackInt8(b)) differs from b for %v", v[:4])
		}
	}
}
