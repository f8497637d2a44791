//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly micro-kernel: it needs AVX2 and FMA (Intel
// since 2013, AMD since 2015); other CPUs run the portable one.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// KernelName names the micro-kernel in use, for benchmarks and logs.
var KernelName = map[bool]string{true: "avx2-fma", false: "go"}[useAVX2]

func kernel6x16(a *float32, lda int, b *float32, kb int, c *float32, ldc int) {
	if useAVX2 {
		kernel6x16AVX2(a, lda, b, kb, c, ldc)
		return
	}
	kernel6x16Portable(a, lda, b, kb, c, ldc)
}

// kernel6x16AVX2 adds, for r < 6 and j < 16, Σ_{k<kb} a[r·lda+k]·b[16k+j]
// to c[r·ldc+j], with twelve 8-wide accumulators (kernel_amd64.s).
//
//go:noescape
func kernel6x16AVX2(a *float32, lda int, b *float32, kb int, c *float32, ldc int)
