//go:build amd64 && !purego

package dot

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly loop (tests switch it off to compare).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func product(a, b []float32) float32 {
	if !useAVX2 || len(a) < 8 {
		return productGo(a, b)
	}
	n := len(a) &^ 7
	s := productAVX2(&a[0], &b[0], n)
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

// productAVX2 returns Σ a[i]·b[i] for i < n, n a positive multiple of 8
// (dot_amd64.s).
//
//go:noescape
func productAVX2(a, b *float32, n int) float32
