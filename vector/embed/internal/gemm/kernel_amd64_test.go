//go:build amd64 && !purego

package gemm

import "testing"

// forEachKernel runs f once with each micro-kernel this CPU can run
// switched on, and tells which it cannot.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	avx2, avx512 := useAVX2, useAVX512
	t.Cleanup(func() { useAVX2, useAVX512 = avx2, avx512 })
	for _, k := range []struct {
		name         string
		avx2, avx512 bool
	}{{"go", false, false}, {"avx2-fma", true, false}, {"avx512", true, true}} {
		if k.avx2 && !avx2 || k.avx512 && !avx512 {
			t.Logf("this CPU has no %s: its kernel is not tested", k.name)
			continue
		}
		useAVX2, useAVX512 = k.avx2, k.avx512
		t.Run(k.name, f)
	}
}

// fusedKernels are the kernels whose every element of C is the same
// sequence of fused multiply-adds, and which must therefore agree to the
// bit: the assembly ones this CPU has.
func fusedKernels() []string {
	var names []string
	if useAVX2 {
		names = append(names, "avx2-fma")
	}
	if useAVX512 {
		names = append(names, "avx512")
	}
	return names
}
