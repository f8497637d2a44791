package uselite

import (
	"fmt"
	"math"
	"sync"

	"github.com/cairnkg/cairn/vector/embed/internal/gemm"
	"github.com/cairnkg/cairn/vector/embed/internal/transformer"
)

// Sizes of the model.
const (
	// MaxTokens is the longest sequence the model reads; the reference
	// pipeline drops the tokens after it (ClipToMaxLength), and Embed cuts
	// longer texts into chunks of this many tokens.
	MaxTokens = 128
	// Dimension is the length of the output vectors.
	Dimension = 512
	embedDim  = 256 // token embeddings and layer 0's attention
	hidden    = 512
	ffnDim    = 1536
	heads     = 4
)

// layer is one transformer layer with its weights packed for gemm.
type layer struct {
	in                  int // width of the layer's input: 256, then 512
	attnScale, attnBias []float32
	qkv                 *gemm.Packed // in × 3·in
	qkvBias             []float32
	out                 *gemm.Packed // in × 512
	outBias             []float32
	qScale              float32
	residual            *gemm.Packed // layer 0: 256 × 512; nil in layer 1
	residualBias        []float32
	ffnScale, ffnBias   []float32
	ffn1                *gemm.Packed // 512 × 1536
	ffn1Bias            []float32
	ffn2                *gemm.Packed // 1536 × 512
	ffn2Bias            []float32
}

// Encoder runs the Universal Sentence Encoder Lite graph on token ids. It
// is safe for concurrent use; each call allocates its own activations.
type Encoder struct {
	embeddings []float32 // vocabulary × 256
	vocab      int
	timing     []float32 // 128 inverse timescales
	layers     [2]layer
	tanh       *gemm.Packed // 512 × 512
	tanhBias   []float32
}

func newEncoder(w map[string]tensor) (*Encoder, error) {
	get := func(name string, shape ...int) ([]float32, error) {
		t, ok := w[name]
		if !ok {
			return nil, fmt.Errorf("uselite: the model has no weight %s", name)
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		if len(t.data) != n {
			return nil, fmt.Errorf("uselite: weight %s has shape %v, want %v", name, t.shape, shape)
		}
		return t.data, nil
	}
	var errs []error
	must := func(name string, shape ...int) []float32 {
		d, err := get(name, shape...)
		if err != nil {
			errs = append(errs, err)
		}
		return d
	}
	mat := func(name string, k, n int) *gemm.Packed {
		d := must(name, k, n)
		if d == nil {
			return nil
		}
		return gemm.Pack(d, k, n)
	}
	e := &Encoder{}
	e.embeddings = must(wEmbeddings, len(w[wEmbeddings].data)/embedDim, embedDim)
	e.vocab = len(e.embeddings) / embedDim
	e.timing = must(wTiming, 1, embedDim/2)
	for i, in := range []int{embedDim, hidden} {
		nm := names(fmt.Sprintf("Layer_%d", i))
		l := &e.layers[i]
		l.in = in
		l.attnScale = must(nm.attnScale, in)
		l.attnBias = must(nm.attnBias, in)
		l.qkv = mat(nm.qkv, in, 3*in)
		l.qkvBias = must(nm.qkvBias, 3*in)
		l.out = mat(nm.out, in, hidden)
		l.outBias = must(nm.outBias, hidden)
		if s := must(nm.qScale); s != nil {
			l.qScale = s[0]
		}
		if i == 0 {
			l.residual = mat(nm.residual, embedDim, hidden)
			l.residualBias = must(nm.residualBias, hidden)
		}
		l.ffnScale = must(nm.ffnScale, hidden)
		l.ffnBias = must(nm.ffnBias, hidden)
		l.ffn1 = mat(nm.ffn1, hidden, ffnDim)
		l.ffn1Bias = must(nm.ffn1Bias, ffnDim)
		l.ffn2 = mat(nm.ffn2, ffnDim, hidden)
		l.ffn2Bias = must(nm.ffn2Bias, hidden)
	}
	e.tanh = mat(wTanh, hidden, Dimension)
	e.tanhBias = must(wTanhBias, Dimension)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return e, nil
}

// workspace holds the activations of one Encode call, kept in a pool so
// that a busy embedder does not allocate megabytes per batch.
type workspace struct {
	x, y, z, norm, qkv, att, ffn []float32
	attn                         transformer.Attention
	pooled, out                  []float32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// Encode returns the unit vector of each sequence of token ids, as the
// reference graph computes it for a batch of one. Every sequence must hold
// between 1 and MaxTokens ids below the vocabulary size. The sequences are
// stacked so that each matrix product runs once for all of them.
func (e *Encoder) Encode(seqs [][]int32) [][]float32 {
	rows := 0
	for _, s := range seqs {
		if len(s) == 0 || len(s) > MaxTokens {
			panic("uselite: Encode: sequence length out of range")
		}
		rows += len(s)
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	m := gemm.RoundUp(rows)
	// x: the layer input; the token embeddings, twice (the graph adds the
	// scattered embeddings to the scattered embeddings-plus-timing), plus
	// the sinusoidal timing signal of each position.
	ws.x = transformer.Grow(ws.x, m*embedDim)
	x := ws.x
	r := 0
	half := embedDim / 2
	for _, s := range seqs {
		for pos, id := range s {
			if int(id) < 0 || int(id) >= e.vocab {
				panic("uselite: Encode: token id out of range")
			}
			emb := e.embeddings[int(id)*embedDim : (int(id)+1)*embedDim]
			row := x[r*embedDim : (r+1)*embedDim]
			for j := range half {
				angle := float64(float32(pos) * e.timing[j])
				row[j] = emb[j] + (emb[j] + float32(math.Sin(angle)))
				row[half+j] = emb[half+j] + (emb[half+j] + float32(math.Cos(angle)))
			}
			r++
		}
	}
	ws.y = transformer.Grow(ws.y, m*hidden)
	e.layer(ws, &e.layers[0], ws.x, ws.y, seqs, m)
	ws.z = transformer.Grow(ws.z, m*hidden)
	e.layer(ws, &e.layers[1], ws.y, ws.z, seqs, m)
	h := ws.z
	// Mean over each sequence's positions, then tanh(mean·W + b), then L2
	// normalisation.
	ps := gemm.RoundUp(len(seqs))
	ws.pooled = transformer.Grow(ws.pooled, ps*hidden)
	pooled := ws.pooled
	r = 0
	for i, s := range seqs {
		dst := pooled[i*hidden : (i+1)*hidden]
		for range s {
			row := h[r*hidden : (r+1)*hidden]
			for j := range dst {
				dst[j] += row[j]
			}
			r++
		}
		n := float32(len(s))
		for j := range dst {
			dst[j] /= n
		}
	}
	ws.out = transformer.Grow(ws.out, ps*Dimension)
	out := ws.out
	transformer.AddBias(out, e.tanhBias, len(seqs))
	gemm.MulAdd(out, Dimension, pooled, hidden, e.tanh, ps)
	vecs := make([][]float32, len(seqs))
	all := make([]float32, len(seqs)*Dimension)
	for i := range seqs {
		v := all[i*Dimension : (i+1)*Dimension : (i+1)*Dimension]
		var sum float32
		for j, o := range out[i*Dimension : (i+1)*Dimension] {
			v[j] = float32(math.Tanh(float64(o)))
			sum += v[j] * v[j]
		}
		inv := float32(1 / math.Sqrt(float64(max(sum, 1e-12))))
		for j := range v {
			v[j] *= inv
		}
		vecs[i] = v
	}
	return vecs
}

// layer runs one transformer layer on x (m rows of l.in values) and writes
// its output to y (m rows of 512 values, zeroed).
func (e *Encoder) layer(ws *workspace, l *layer, x, y []float32, seqs [][]int32, m int) {
	in := l.in
	// The residual path: x itself in layer 1, x·W + b in layer 0.
	if l.residual != nil {
		transformer.AddBias(y, l.residualBias, m)
		gemm.MulAdd(y, hidden, x, in, l.residual, m)
	} else {
		copy(y, x[:m*hidden])
	}
	// Self-attention on the normalised input. qkv has gemm.TileRows spare rows,
	// since a sequence's attention reads whole tiles of rows.
	ws.norm = transformer.Grow(ws.norm, m*hidden)
	transformer.LayerNorm(ws.norm, x, l.attnScale, l.attnBias, m, in, 1e-6)
	ws.qkv = transformer.Grow(ws.qkv, (m+gemm.TileRows)*3*in)
	transformer.AddBias(ws.qkv, l.qkvBias, m)
	gemm.MulAdd(ws.qkv, 3*in, ws.norm, in, l.qkv, m)
	ws.att = transformer.Grow(ws.att, m*in)
	start := 0
	for _, s := range seqs {
		ws.attn.SelfAttention(ws.qkv, ws.att, in, start, len(s), heads, l.qScale)
		start += len(s)
	}
	// The attention output projection is added to the residual.
	transformer.AddBias(y, l.outBias, m)
	gemm.MulAdd(y, hidden, ws.att, in, l.out, m)
	// The feed-forward block on the normalised sum, added to it.
	transformer.LayerNorm(ws.norm, y, l.ffnScale, l.ffnBias, m, hidden, 1e-6)
	ws.ffn = transformer.Grow(ws.ffn, m*ffnDim)
	f := ws.ffn
	transformer.AddBias(f, l.ffn1Bias, m)
	gemm.MulAdd(f, ffnDim, ws.norm, hidden, l.ffn1, m)
	for i, v := range f {
		if v < 0 {
			f[i] = 0
		}
	}
	transformer.AddBias(y, l.ffn2Bias, m)
	gemm.MulAdd(y, hidden, f, ffnDim, l.ffn2, m)
}
