package gemm

import "sync"

const (
	// PanelWidth is the number of columns of B in one panel of a Packed
	// matrix: Pack needs a multiple of it.
	PanelWidth = 16
	// TileRows is the number of rows of A in one micro-tile: MulAdd needs
	// a multiple of it.
	TileRows = 6
	kc       = 256 // rows of B per cache block
)

// RoundUp rounds m up to a multiple of TileRows, the rows MulAdd reads.
func RoundUp(m int) int { return (m + TileRows - 1) / TileRows * TileRows }

// RoundUp16 rounds n up to a multiple of PanelWidth, the columns of a
// Packed matrix.
func RoundUp16(n int) int { return (n + PanelWidth - 1) / PanelWidth * PanelWidth }

// Packed is a K×N matrix stored as N/16 panels; panel p holds, for k in
// 0..K, the 16 values B[k][16p..16p+16] one after another.
type Packed struct {
	K, N int
	Data []float32
}

// Pack lays out the row-major K×N matrix b in panels; n must be a multiple
// of 16.
func Pack(b []float32, k, n int) *Packed {
	if n%PanelWidth != 0 || len(b) != k*n {
		panic("gemm: pack: bad shape")
	}
	p := &Packed{K: k, N: n, Data: make([]float32, k*n)}
	for panel := range n / PanelWidth {
		dst := p.Data[panel*k*PanelWidth:]
		for kk := range k {
			copy(dst[kk*PanelWidth:(kk+1)*PanelWidth], b[kk*n+panel*PanelWidth:])
		}
	}
	return p
}

// PackTransposed lays out in panels the K×N matrix whose transpose, the
// row-major N×K matrix bt, is given (PyTorch stores a linear layer's
// weight as out × in); n must be a multiple of 16.
func PackTransposed(bt []float32, k, n int) *Packed {
	if n%PanelWidth != 0 || len(bt) != k*n {
		panic("gemm: pack: bad shape")
	}
	p := &Packed{K: k, N: n, Data: make([]float32, k*n)}
	for col := range n {
		dst := p.Data[(col/PanelWidth)*k*PanelWidth+col%PanelWidth:]
		for kk, v := range bt[col*k : (col+1)*k] {
			dst[kk*PanelWidth] = v
		}
	}
	return p
}

// MulAdd adds A·B to C for the first m rows, A and C row-major with row
// strides lda and ldc; m must be a multiple of TileRows (callers pad their
// activations) and A has b.K columns.
func MulAdd(c []float32, ldc int, a []float32, lda int, b *Packed, m int) {
	k, n := b.K, b.N
	if m == 0 || k == 0 {
		return
	}
	if m%TileRows != 0 || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n || len(b.Data) < k*n {
		panic("gemm: gemm: bad shape")
	}
	panels, pairs := n/PanelWidth, wide()
	for k0 := 0; k0 < k; k0 += kc {
		kb := min(kc, k-k0)
		for panel := 0; panel < panels; {
			bp := b.Data[panel*k*PanelWidth+k0*PanelWidth:]
			if pairs && panel+1 < panels {
				for i := 0; i < m; i += TileRows {
					kernel6x32(&a[i*lda+k0], lda, &bp[0], k*PanelWidth, kb, &c[i*ldc+panel*PanelWidth], ldc)
				}
				panel += 2
				continue
			}
			for i := 0; i < m; i += TileRows {
				kernel6x16(&a[i*lda+k0], lda, &bp[0], kb, &c[i*ldc+panel*PanelWidth], ldc)
			}
			panel++
		}
	}
}

// kernel6x16Go is the portable micro-kernel: for r < 6 and j < 16,
// c[r*ldc+j] += Σ_{kk<kb} a[r*lda+kk] · b[kk*16+j]. Each row keeps its 16
// sums in scalar locals, which the compiler holds in registers.
func kernel6x16Go(a []float32, lda int, b []float32, kb int, c []float32, ldc int) {
	b = b[:kb*PanelWidth]
	for r := range TileRows {
		ar := a[r*lda : r*lda+kb]
		var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15 float32
		for kk, av := range ar {
			bk := b[kk*PanelWidth : kk*PanelWidth+PanelWidth : kk*PanelWidth+PanelWidth]
			c0 += av * bk[0]
			c1 += av * bk[1]
			c2 += av * bk[2]
			c3 += av * bk[3]
			c4 += av * bk[4]
			c5 += av * bk[5]
			c6 += av * bk[6]
			c7 += av * bk[7]
			c8 += av * bk[8]
			c9 += av * bk[9]
			c10 += av * bk[10]
			c11 += av * bk[11]
			c12 += av * bk[12]
			c13 += av * bk[13]
			c14 += av * bk[14]
			c15 += av * bk[15]
		}
		cr := c[r*ldc : r*ldc+PanelWidth : r*ldc+PanelWidth]
		cr[0] += c0
		cr[1] += c1
		cr[2] += c2
		cr[3] += c3
		cr[4] += c4
		cr[5] += c5
		cr[6] += c6
		cr[7] += c7
		cr[8] += c8
		cr[9] += c9
		cr[10] += c10
		cr[11] += c11
		cr[12] += c12
		cr[13] += c13
		cr[14] += c14
		cr[15] += c15
	}
}

// MulAddSplit is MulAdd with b's panels shared out among up to workers
// goroutines, each adding its own columns of C: for a product of few rows
// (one short text) that one goroutine would otherwise compute alone.
func MulAddSplit(c []float32, ldc int, a []float32, lda int, b *Packed, m, workers int) {
	panels := b.N / PanelWidth
	workers = min(workers, panels)
	if workers <= 1 {
		MulAdd(c, ldc, a, lda, b, m)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		p0, p1 := w*panels/workers, (w+1)*panels/workers
		part := &Packed{K: b.K, N: (p1 - p0) * PanelWidth, Data: b.Data[p0*b.K*PanelWidth : p1*b.K*PanelWidth]}
		cc := c[p0*PanelWidth:]
		wg.Go(func() { MulAdd(cc, ldc, a, lda, part, m) })
	}
	wg.Wait()
}
