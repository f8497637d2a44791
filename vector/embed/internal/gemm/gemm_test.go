package gemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGemm compares gemm, with each micro-kernel this CPU runs, with a
// plain triple loop in float64, on shapes that cross the cache blocks and
// have an even and an odd number of panels.
func TestGemm(t *testing.T) { forEachKernel(t, testGemm) }

func testGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][3]int{{6, 16, 16}, {12, 300, 32}, {18, 512, 48}, {6, 1536, 16}, {12, 384, 1152}} {
		m, k, n := shape[0], shape[1], shape[2]
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		c := make([]float32, m*n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		for i := range c {
			c[i] = rng.Float32()
		}
		want := make([]float64, m*n)
		for i := range m {
			for j := range n {
				s := float64(c[i*n+j])
				for kk := range k {
					s += float64(a[i*k+kk]) * float64(b[kk*n+j])
				}
				want[i*n+j] = s
			}
		}
		MulAdd(c, n, a, k, Pack(b, k, n), m)
		for i := range c {
			if d := math.Abs(float64(c[i]) - want[i]); d > 1e-4*math.Sqrt(float64(k)) {
				t.Fatalf("%dx%dx%d (%s kernel): element %d = %g, want %g", m, k, n, KernelName(), i, c[i], want[i])
			}
		}
	}
}

// TestPackTransposed checks that packing a matrix from its transpose
// gives the same panels as packing it directly.
func TestPackTransposed(t *testing.T) {
	k, n := 5, 32
	b := make([]float32, k*n)
	bt := make([]float32, k*n)
	for i := range k {
		for j := range n {
			b[i*n+j] = float32(i*1000 + j)
			bt[j*k+i] = b[i*n+j]
		}
	}
	if got, want := PackTransposed(bt, k, n).Data, Pack(b, k, n).Data; !slices.Equal(got, want) {
		t.Errorf("PackTransposed gives %v, Pack %v", got, want)
	}
}

// TestMulAddSplit checks that sharing the panels out among goroutines,
// evenly or not, more goroutines than panels included, gives exactly
// MulAdd's result.
func TestMulAddSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, k, n := 12, 300, 80 // five panels
	a, b, c := randomProduct(rng, m, k, n)
	p := Pack(b, k, n)
	want := slices.Clone(c)
	MulAdd(want, n, a, k, p, m)
	for _, workers := range []int{0, 1, 2, 3, 5, 8} {
		got := slices.Clone(c)
		MulAddSplit(got, n, a, k, p, m, workers)
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: the product differs from MulAdd's", workers)
		}
	}
}

// TestFusedKernelsAgree checks that the assembly kernels give the same
// bits, so that a vector does not depend on the CPU it was computed on
// among those that have them.
func TestFusedKernelsAgree(t *testing.T) {
	names := fusedKernels()
	if len(names) < 2 {
		t.Skipf("this CPU runs %d of the fused kernels; nothing to compare", len(names))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	m, k, n := 18, 1536, 400 // 25 panels: twelve pairs and one alone
	a, b, c := randomProduct(rng, m, k, n)
	p := Pack(b, k, n)
	results := map[string][]float32{}
	forEachKernel(t, func(t *testing.T) {
		got := slices.Clone(c)
		MulAdd(got, n, a, k, p, m)
		results[KernelName()] = got
	})
	for _, name := range names[1:] {
		if !slices.Equal(results[name], results[names[0]]) {
			t.Errorf("the %s kernel's product differs from the %s kernel's", name, names[0])
		}
	}
}

// randomProduct returns the operands of an m×k by k×n product and its
// m×n accumulator, values uniform in [-1, 1).
func randomProduct(rng *rand.Rand, m, k, n int) (a, b, c []float32) {
	a, b, c = make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, s := range [][]float32{a, b, c} {
		for i := range s {
			s[i] = rng.Float32()*2 - 1
		}
	}
	return a, b, c
}
