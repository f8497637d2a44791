//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// The assembly micro-kernels: AVX2 with FMA (Intel since 2013, AMD since
// 2015) for one panel, AVX-512 (Intel's servers since 2017, AMD since
// 2022) for two panels at once; other CPUs run the portable one. Tests
// switch them off to compare each with the others.
var (
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F
)

// KernelName names the micro-kernel in use, for benchmarks and logs.
func KernelName() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2-fma"
	}
	return "go"
}

// wide reports whether kernel6x32 runs in one pass, so that MulAdd hands
// it two panels at a time.
func wide() bool { return useAVX512 }

func kernel6x16(a *float32, lda int, b *float32, kb int, c *float32, ldc int) {
	if useAVX2 {
		kernel6x16AVX2(a, lda, b, kb, c, ldc)
		return
	}
	kernel6x16Portable(a, lda, b, kb, c, ldc)
}

// kernel6x32 adds the 6×32 tile of the panel at b and the one panel
// floats after it (MulAdd calls it only when wide reports true).
func kernel6x32(a *float32, lda int, b *float32, panel int, kb int, c *float32, ldc int) {
	kernel6x32AVX512(a, lda, b, panel, kb, c, ldc)
}

// kernel6x16AVX2 adds, for r < 6 and j < 16, Σ_{k<kb} a[r·lda+k]·b[16k+j]
// to c[r·ldc+j], with twelve 8-wide accumulators (kernel_amd64.s).
//
//go:noescape
func kernel6x16AVX2(a *float32, lda int, b *float32, kb int, c *float32, ldc int)

// kernel6x32AVX512 adds, for r < 6 and j < 32, Σ_{k<kb} a[r·lda+k]·B[k][j]
// to c[r·ldc+j], where B's columns 0-15 are the panel at b and 16-31 the
// one panel floats further, with twelve 16-wide accumulators
// (kernel_amd64.s).
//
//go:noescape
func kernel6x32AVX512(a *float32, lda int, b *float32, panel int, kb int, c *float32, ldc int)
