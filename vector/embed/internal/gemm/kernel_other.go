//go:build !amd64 || purego

package gemm

// KernelName names the micro-kernel in use, for benchmarks and logs.
const KernelName = "go"

func kernel6x16(a *float32, lda int, b *float32, kb int, c *float32, ldc int) {
	kernel6x16Portable(a, lda, b, kb, c, ldc)
}
