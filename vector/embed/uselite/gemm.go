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

// gemm adds A·B to C for the first m rows, A and C row-major with row
// strides lda and ldc; m must be a multiple of tileRows (callers pad their
// activations) and A has b.k columns.
func gemm(c []float32, ldc int, a []float32, lda int, b *packed, m int) {
	k, n := b.k, b.n
	if m == 0 || k == 0 {
		return
	}
	if m%tileRows != 0 || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n || len(b.data) < k*n {
		panic("uselite: gemm: bad shape")
	}
	for k0 := 0; k0 < k; k0 += kc {
		kb := min(kc, k-k0)
		for panel := range n / panelWidth {
			bp := b.data[panel*k*panelWidth+k0*panelWidth:]
			for i := 0; i < m; i += tileRows {
				kernel6x16(&a[i*lda+k0], lda, &bp[0], kb, &c[i*ldc+panel*panelWidth], ldc)
			}
		}
	}
}

// kernel6x16Go is the portable micro-kernel: for r < 6 and j < 16,
// c[r*ldc+j] += Σ_{kk<kb} a[r*lda+kk] · b[kk*16+j]. Each row keeps its 16
// sums in scalar locals, which the compiler holds in registers.
func kernel6x16Go(a []float32, lda int, b []float32, kb int, c []float32, ldc int) {
	b = b[:kb*panelWidth]
	for r := range tileRows {
		ar := a[r*lda : r*lda+kb]
		var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15 float32
		for kk, av := range ar {
			bk := b[kk*panelWidth : kk*panelWidth+panelWidth : kk*panelWidth+panelWidth]
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
		cr := c[r*ldc : r*ldc+panelWidth : r*ldc+panelWidth]
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
