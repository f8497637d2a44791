package gemm

import "unsafe"

// kernel6x16Portable runs the portable micro-kernel on raw pointers: a to
// the first of 6 rows of A (stride lda), b to kb×16 Packed values, c to the
// first of 6 rows of C (stride ldc).
func kernel6x16Portable(a *float32, lda int, b *float32, kb int, c *float32, ldc int) {
	kernel6x16Go(
		unsafe.Slice(a, (TileRows-1)*lda+kb),
		lda,
		unsafe.Slice(b, kb*PanelWidth),
		kb,
		unsafe.Slice(c, (TileRows-1)*ldc+PanelWidth),
		ldc,
	)
}
