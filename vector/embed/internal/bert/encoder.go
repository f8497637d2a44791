package bert

import (
	"fmt"
	"math"
	"sync"

	"github.com/cairnkg/cairn/vector/embed/internal/gemm"
	"github.com/cairnkg/cairn/vector/embed/internal/transformer"
)

// Sizes shared by the BERT models this package runs (all-MiniLM-L6-v2,
// bge-small-en-v1.5): width 384, 12 heads, feed-forward 1536, 512
// positions; the number of layers is read from the weights.
const (
	// Dimension is the length of the output vectors.
	Dimension = 384
	hidden    = 384
	ffnDim    = 1536
	heads     = 12
	positions = 512
	maxLayers = 48
	eps       = 1e-12 // layer norm
)

// Pooling is how a sequence's outputs become its vector.
type Pooling int

const (
	// MeanPooling averages the outputs of every position, [CLS] and [SEP]
	// included (sentence-transformers' mean pooling, as all-MiniLM-L6-v2
	// uses it).
	MeanPooling Pooling = iota
	// CLSPooling takes the output at [CLS] (bge-small-en-v1.5).
	CLSPooling
)

// Config is what differs between the models: how a sequence is pooled,
// and the most ids of text one sequence holds (the model's max_seq_length
// less [CLS] and [SEP]; at most 510).
type Config struct {
	Pooling   Pooling
	MaxTokens int
}

// layer is one BERT layer with its weights packed for gemm.
type layer struct {
	qkv                 *gemm.Packed // 384 × 1152: queries, keys, values
	qkvBias             []float32
	out                 *gemm.Packed // 384 × 384
	outBias             []float32
	attnScale, attnBias []float32    // layer norm after attention
	ffn1                *gemm.Packed // 384 × 1536
	ffn1Bias            []float32
	ffn2                *gemm.Packed // 1536 × 384
	ffn2Bias            []float32
	ffnScale, ffnBias   []float32 // layer norm after the feed-forward block
}

// Encoder runs a BERT encoder of width 384, pools each sequence (Config)
// and normalises its vector to unit length. It is safe for concurrent use;
// each call takes its activations from a pool.
type Encoder struct {
	cfg       Config
	words     []float32 // vocabulary × 384
	vocab     int
	positions []float32 // 512 × 384
	tokenType []float32 // type 0: 384
	embScale  []float32
	embBias   []float32
	layers    []layer
}

// NewEncoder packs the weights of a BERT encoder, named as in PyTorch's
// state dict of the Hugging Face model (embeddings.*, encoder.layer.N.*),
// linear weights stored out × in. The layers are encoder.layer.0 up to the
// first missing index; a missing or misshapen weight is an error.
func NewEncoder(w map[string]Tensor, cfg Config) (*Encoder, error) {
	if cfg.MaxTokens < 1 || cfg.MaxTokens > positions-2 {
		return nil, fmt.Errorf("bert: MaxTokens %d out of range [1, %d]", cfg.MaxTokens, positions-2)
	}
	if cfg.Pooling != MeanPooling && cfg.Pooling != CLSPooling {
		return nil, fmt.Errorf("bert: unknown pooling %d", cfg.Pooling)
	}
	var errs []error
	must := func(name string, shape ...int) []float32 {
		t, ok := w[name]
		if !ok {
			errs = append(errs, fmt.Errorf("bert: the model has no weight %s", name))
			return nil
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		if len(t.Data) != n {
			errs = append(errs, fmt.Errorf("bert: weight %s has shape %v, want %v", name, t.Shape, shape))
			return nil
		}
		return t.Data
	}
	// linear packs the weight of a PyTorch linear layer, stored out ×
	// in, as the in × out matrix gemm multiplies by.
	linear := func(name string, in, out int) *gemm.Packed {
		d := must(name, out, in)
		if d == nil {
			return nil
		}
		return gemm.PackTransposed(d, in, out)
	}
	n := 0
	for n < maxLayers {
		if _, ok := w[fmt.Sprintf("encoder.layer.%d.attention.self.query.weight", n)]; !ok {
			break
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("bert: the model has no layer (no weight encoder.layer.0.attention.self.query.weight)")
	}
	e := &Encoder{cfg: cfg, layers: make([]layer, n)}
	words := w["embeddings.word_embeddings.weight"]
	e.vocab = len(words.Data) / hidden
	e.words = must("embeddings.word_embeddings.weight", e.vocab, hidden)
	e.positions = must("embeddings.position_embeddings.weight", positions, hidden)
	if tt := must("embeddings.token_type_embeddings.weight", 2, hidden); tt != nil {
		e.tokenType = tt[:hidden]
	}
	e.embScale = must("embeddings.LayerNorm.weight", hidden)
	e.embBias = must("embeddings.LayerNorm.bias", hidden)
	for i := range e.layers {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		l := &e.layers[i]
		// Queries, keys and values side by side (the rows of the stored
		// 1152 × 384 matrix), so that one product makes all three.
		var qkv []float32
		for _, part := range []string{"query", "key", "value"} {
			qkv = append(qkv, must(p+"attention.self."+part+".weight", hidden, hidden)...)
			l.qkvBias = append(l.qkvBias, must(p+"attention.self."+part+".bias", hidden)...)
		}
		if len(qkv) == 3*hidden*hidden {
			l.qkv = gemm.PackTransposed(qkv, hidden, 3*hidden)
		}
		l.out = linear(p+"attention.output.dense.weight", hidden, hidden)
		l.outBias = must(p+"attention.output.dense.bias", hidden)
		l.attnScale = must(p+"attention.output.LayerNorm.weight", hidden)
		l.attnBias = must(p+"attention.output.LayerNorm.bias", hidden)
		l.ffn1 = linear(p+"intermediate.dense.weight", hidden, ffnDim)
		l.ffn1Bias = must(p+"intermediate.dense.bias", ffnDim)
		l.ffn2 = linear(p+"output.dense.weight", ffnDim, hidden)
		l.ffn2Bias = must(p+"output.dense.bias", hidden)
		l.ffnScale = must(p+"output.LayerNorm.weight", hidden)
		l.ffnBias = must(p+"output.LayerNorm.bias", hidden)
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return e, nil
}

// workspace holds the activations of one Encode call, kept in a pool so
// that a busy embedder does not allocate megabytes per batch.
type workspace struct {
	x, y, norm, qkv, att, ffn []float32
	attn                      transformer.Attention
	// split is how many goroutines share each matrix product of the call.
	split int
}

// splitRows is the most rows (tokens, with [CLS] and [SEP]) of an Encode
// call whose matrix products are shared out among its cores: a search's
// question, which one core would otherwise encode alone while the others
// wait. Larger calls come from batches that batch.Embed already spreads
// over the processors.
const splitRows = 64

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// Vocabulary is the number of word embeddings, the bound of token ids.
func (e *Encoder) Vocabulary() int { return e.vocab }

// Layers is the number of BERT layers.
func (e *Encoder) Layers() int { return len(e.layers) }

// MaxTokens is the most ids of text Encode takes in one sequence.
func (e *Encoder) MaxTokens() int { return e.cfg.MaxTokens }

// Encode returns the unit vector of each sequence of token ids, as the
// reference computes it for a batch of one: [CLS] ids [SEP] through the
// layers, pooled (the mean of all the positions' outputs, or the output
// at [CLS]), L2 normalisation.
// Every sequence must hold between 1 and MaxTokens ids below the
// vocabulary size, without [CLS] and [SEP]. The sequences are stacked so
// that each matrix product runs once for all of them; a call of at most
// splitRows rows (a question) shares each product out among cores
// goroutines, a larger one runs on one. The vectors do not depend on
// cores.
func (e *Encoder) Encode(seqs [][]int32, cores int) [][]float32 {
	rows := 0
	for _, s := range seqs {
		if len(s) == 0 || len(s) > e.cfg.MaxTokens {
			panic("bert: Encode: sequence length out of range")
		}
		rows += len(s) + 2
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	ws.split = 1
	if rows <= splitRows {
		ws.split = max(cores, 1)
	}
	m := gemm.RoundUp(rows)
	// The embeddings: word + position + token type 0, layer-normalised.
	ws.y = transformer.Grow(ws.y, m*hidden)
	r := 0
	for _, s := range seqs {
		for pos := range len(s) + 2 {
			id := int32(idCLS)
			switch {
			case pos == len(s)+1:
				id = idSEP
			case pos > 0:
				id = s[pos-1]
			}
			if int(id) < 0 || int(id) >= e.vocab {
				panic("bert: Encode: token id out of range")
			}
			word := e.words[int(id)*hidden : (int(id)+1)*hidden]
			position := e.positions[pos*hidden : (pos+1)*hidden]
			row := ws.y[r*hidden : (r+1)*hidden]
			for j := range row {
				row[j] = word[j] + e.tokenType[j] + position[j]
			}
			r++
		}
	}
	ws.x = transformer.Grow(ws.x, m*hidden)
	transformer.LayerNorm(ws.x, ws.y, e.embScale, e.embBias, m, hidden, eps)
	for i := range e.layers {
		e.layer(ws, &e.layers[i], seqs, m)
	}
	// Pooling: the mean over each sequence's positions ([CLS] and [SEP]
	// included, as the attention mask covers them) or its [CLS] output;
	// then L2 normalisation.
	vecs := make([][]float32, len(seqs))
	all := make([]float32, len(seqs)*Dimension)
	r = 0
	for i, s := range seqs {
		v := all[i*Dimension : (i+1)*Dimension : (i+1)*Dimension]
		n := len(s) + 2
		if e.cfg.Pooling == CLSPooling {
			copy(v, ws.x[r*hidden:(r+1)*hidden])
		} else {
			for k := range n {
				for j, x := range ws.x[(r+k)*hidden : (r+k+1)*hidden] {
					v[j] += x
				}
			}
			for j := range v {
				v[j] /= float32(n)
			}
		}
		r += n
		var sum float64
		for j := range v {
			sum += float64(v[j]) * float64(v[j])
		}
		inv := float32(1 / max(math.Sqrt(sum), 1e-12))
		for j := range v {
			v[j] *= inv
		}
		vecs[i] = v
	}
	return vecs
}

// layer runs one post-norm BERT layer on ws.x (m rows of 384 values) and
// leaves its output in ws.x.
func (e *Encoder) layer(ws *workspace, l *layer, seqs [][]int32, m int) {
	// Self-attention; qkv has TileRows spare rows, since a sequence's
	// attention reads whole tiles of rows.
	ws.qkv = transformer.Grow(ws.qkv, (m+gemm.TileRows)*3*hidden)
	transformer.AddBias(ws.qkv, l.qkvBias, m)
	gemm.MulAddSplit(ws.qkv, 3*hidden, ws.x, hidden, l.qkv, m, ws.split)
	ws.att = transformer.Grow(ws.att, m*hidden)
	scale := float32(1 / math.Sqrt(hidden/heads))
	start := 0
	for _, s := range seqs {
		ws.attn.SelfAttention(ws.qkv, ws.att, hidden, start, len(s)+2, heads, scale)
		start += len(s) + 2
	}
	// The output projection plus the input, normalised.
	ws.y = transformer.Grow(ws.y, m*hidden)
	copy(ws.y, ws.x[:m*hidden])
	transformer.AddBias(ws.y, l.outBias, m)
	gemm.MulAddSplit(ws.y, hidden, ws.att, hidden, l.out, m, ws.split)
	ws.norm = transformer.Grow(ws.norm, m*hidden)
	transformer.LayerNorm(ws.norm, ws.y, l.attnScale, l.attnBias, m, hidden, eps)
	// The feed-forward block (GELU with erf, as PyTorch's default) plus its input, normalised.
	ws.ffn = transformer.Grow(ws.ffn, m*ffnDim)
	f := ws.ffn
	transformer.AddBias(f, l.ffn1Bias, m)
	gemm.MulAddSplit(f, ffnDim, ws.norm, hidden, l.ffn1, m, ws.split)
	for i, v := range f {
		f[i] = 0.5 * v * (1 + erf(v*(1/math.Sqrt2)))
	}
	copy(ws.y, ws.norm[:m*hidden])
	transformer.AddBias(ws.y, l.ffn2Bias, m)
	gemm.MulAddSplit(ws.y, hidden, f, ffnDim, l.ffn2, m, ws.split)
	transformer.LayerNorm(ws.x, ws.y, l.ffnScale, l.ffnBias, m, hidden, eps)
}

// erf is the error function to within 4.2e-7 (TestErf), a rational
// approximation (Eigen's for float32) that costs about a thirteenth of
// math.Erf, which otherwise takes 40% of the encoder's time in the GELUs.
// The clamp is written out: the min and max built-ins, which order NaNs
// and signed zeros, are much slower here.
func erf(x float32) float32 {
	if x > 4 {
		x = 4
	} else if x < -4 {
		x = -4
	}
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = p*x2 + -2.10102402082508e-06
	p = p*x2 + -5.69250639462346e-05
	p = p*x2 + -7.34990630326855e-04
	p = p*x2 + -2.95459980854025e-03
	p = p*x2 + -1.60960333262415e-02
	p *= x
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = q*x2 + -1.68282697438203e-03
	q = q*x2 + -7.37332916720468e-03
	q = q*x2 + -1.42647390514189e-02
	return p / q
}
