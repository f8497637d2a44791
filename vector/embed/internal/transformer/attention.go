package transformer

import (
	"math"

	"github.com/cairnkg/cairn/vector/embed/internal/gemm"
)

// Attention is the scratch space of multi-head self-attention for one
// goroutine: the keys transposed and the values, packed for gemm; the
// scores; one head's output. Its zero value is ready to use.
type Attention struct {
	keys, values gemm.Packed
	scores, head []float32
}

// SelfAttention computes multi-head self-attention for the sequence of n
// rows that starts at row start of qkv, which holds per row the queries,
// keys and values, each of width (heads of width/heads values; a row
// stride of 3·width); the queries are multiplied by scale in place first.
// The concatenated heads go to the same rows of out (row stride width).
// qkv must hold gemm.TileRows spare rows after the sequence, since the
// products read whole tiles of rows, and width/heads must be a multiple of
// gemm.PanelWidth. Both products (queries × keys, weights × values) run on
// gemm.
func (a *Attention) SelfAttention(qkv, out []float32, width, start, n, heads int, scale float32) {
	d := width / heads
	stride := 3 * width
	np := gemm.RoundUp16(n) // key positions, padded to whole panels
	mp := gemm.RoundUp(n)   // query positions, padded to whole tiles
	qkv = qkv[start*stride:]
	for h := range heads {
		for i := range n {
			q := qkv[i*stride+h*d : i*stride+(h+1)*d]
			for t := range q {
				q[t] *= scale
			}
		}
		// Keys, transposed into panels of 16 positions (zero past n).
		a.keys.K, a.keys.N = d, np
		a.keys.Data = Grow(a.keys.Data, d*np)
		for j := range n {
			k := qkv[j*stride+width+h*d : j*stride+width+(h+1)*d]
			dst := a.keys.Data[(j/gemm.PanelWidth)*d*gemm.PanelWidth+j%gemm.PanelWidth:]
			for t, v := range k {
				dst[t*gemm.PanelWidth] = v
			}
		}
		a.scores = Grow(a.scores, mp*np)
		gemm.MulAdd(a.scores, np, qkv[h*d:], stride, &a.keys, mp)
		// Softmax over the n keys of each query; the padding gets weight 0.
		for i := range n {
			row := a.scores[i*np : i*np+n]
			top := float32(math.Inf(-1))
			for _, s := range row {
				top = max(top, s)
			}
			var sum float32
			for j, s := range row {
				row[j] = float32(math.Exp(float64(s - top)))
				sum += row[j]
			}
			for j := range row {
				row[j] /= sum
			}
			clear(a.scores[i*np+n : (i+1)*np])
		}
		// Values, in panels of 16 of their d columns.
		a.values.K, a.values.N = n, d
		a.values.Data = Grow(a.values.Data, n*d)
		for j := range n {
			v := qkv[j*stride+2*width+h*d : j*stride+2*width+(h+1)*d]
			for p := range d / gemm.PanelWidth {
				copy(a.values.Data[p*n*gemm.PanelWidth+j*gemm.PanelWidth:], v[p*gemm.PanelWidth:(p+1)*gemm.PanelWidth])
			}
		}
		a.head = Grow(a.head, mp*d)
		gemm.MulAdd(a.head, d, a.scores, np, &a.values, mp)
		for i := range n {
			copy(out[(start+i)*width+h*d:(start+i)*width+(h+1)*d], a.head[i*d:(i+1)*d])
		}
	}
}
