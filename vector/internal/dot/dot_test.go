package dot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProduct compares Product with a float64 sum on every length from 0
// to 100 and a vector's usual lengths, with the assembly loop where this
// CPU has it and the portable one.
func TestProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{384, 512, 768, 1536, 3072}
	for n := range 101 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		a, b := make([]float32, n), make([]float32, n+3) // b may be longer
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		for _, got := range []float32{Product(a, b), productGo(a, b)} {
			if d := math.Abs(float64(got) - want); d > 1e-5*math.Sqrt(float64(n)+1) {
				t.Fatalf("length %d: %g, want %g", n, got, want)
			}
		}
	}
}

// BenchmarkProduct measures one product of two 384-dimensional vectors
// (bge's and MiniLM's), the scan's step.
func BenchmarkProduct(b *testing.B) {
	x, y := make([]float32, 384), make([]float32, 384)
	for i := range x {
		x[i], y[i] = float32(i), float32(384-i)
	}
	var s float32
	for b.Loop() {
		s += Product(x, y)
	}
	_ = s
}
