//go:build !amd64 || purego

package gemm

// KernelName names the micro-kernel in use, for benchmarks and logs.
func KernelName() string { return "go" }

func wide() bool { return false }

func kernel6x16(a *float32, lda int, b *float32, kb int, c *float32, ldc int) {
	kernel6x16Portable(a, lda, b, kb, c, ldc)
}

func kernel6x32(a *float32, lda int, b *float32, panel int, kb int, c *float32, ldc int) {
	panic("gemm: no 6×32 kernel on this platform")
}
