package uselite

// This file holds the float32 matrix product the encoder spends its time
// in: C += A·B, A row-major (M×K), B packed once in panels of 16 columns,
// C row-major (M×N). The work is cut in blocks of kc rows of B (which then
// stay in the first-level cache while every row block of A passes) and in
// micro-tiles of 6 rows × 16 columns, computed by kernel6x16: an AVX2/FMA
// assembly kernel on amd64 CPUs that have them, plain Go elsewhere.

const (
	panelWidth = 16  // columns of B per panel
	tileRows   = 6   // rows of A per micro-tile
	kc         = 256 // rows of B per cache block
)

// packed is a K×N matrix stored as N/16 panels; panel p holds, for k in
// 0..K, the 16 values B[k][16p..16p+16] one after another.
type packed struct {
	k, n int
	data []float32
}

// pack lays out the row-major K×N matrix b in panels; n must be a multiple
// of 16.
func pack(b []float32, k, n int) *packed {
	if n%panelWidth != 0 || len(b) != k*n {
		panic("uselite: pack: bad shape")
	}
	p := &packed{k: k, n: n, data: make([]float32, k*n)}
	for panel := range n / panelWidth {
		dst := p.data[panel*k*panelWidth:]
		for kk := range k {
			copy(dst[kk*panelWidth:(kk+1)*panelWidth], b[kk*n+panel*panelWidth:])
		}
	}
	return p
}

// gemm adds A·B to C for the first m rows; m must be a multiple of
// tileRows (callers pad their activations) and A has b.k columns.
func gemm(c []float32, a []float32, b *packed, m int) {
	k, n := b.k, b.n
	if m%tileRows != 0 || len(a) < m*k || len(c) < m*n {
		panic("uselite: gemm: bad shape")
	}
	for k0 := 0; k0 < k; k0 += kc {
		kb := min(kc, k-k0)
		for panel := range n / panelWidth {
			bp := b.data[panel*k*panelWidth+k0*panelWidth:]
			for i := 0; i < m; i += tileRows {
				kernel6x16(&a[i*k+k0], k, &bp[0], kb, &c[i*n+panel*panelWidth], n)
			}
		}
	}
}

// kernel6x16Go is the portable micro-kernel: for r < 6 and j < 16,
// c[r*ldc+j] += Σ_{kk<kb} a[r*lda+kk] · b[kk*16+j].
func kernel6x16Go(a []float32, lda int, b []float32, kb int, c []float32, ldc int) {
	var acc [tileRows][panelWidth]float32
	for kk := range kb {
		bk := (*[panelWidth]float32)(b[kk*panelWidth:])
		for r := range tileRows {
			av := a[r*lda+kk]
			row := &acc[r]
			for j := range panelWidth {
				row[j] += av * bk[j]
			}
		}
	}
	for r := range tileRows {
		cr := c[r*ldc : r*ldc+panelWidth]
		for j := range panelWidth {
			cr[j] += acc[r][j]
		}
	}
}
