package bge

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/cairnkg/cairn/vector/embed/internal/batch"
	"github.com/cairnkg/cairn/vector/embed/internal/bert"
	"github.com/cairnkg/cairn/vector/embed/internal/onnx"
)

// Name identifies this embedder and its vector space; it is recorded with
// each collection (see embed.Embedder.Name).
const Name = "bge:bge-small-en-v1.5:384"

// Sizes of the model.
const (
	// MaxTokens is the most ids of text one sequence holds: 512 positions
	// less [CLS] and [SEP].
	MaxTokens = 510
	// Dimension is the length of the output vectors.
	Dimension = bert.Dimension
	// layers is the depth the weights must have.
	layers = 12
)

//go:embed model
var modelFS embed.FS

// ErrUnavailable is returned by New when the binary was built without the
// model files (scripts/provision-bge.sh puts them in place).
var ErrUnavailable = errors.New("bge: the model files were not built in (run scripts/provision-bge.sh before go build)")

// Available reports whether the binary carries the model files.
func Available() bool {
	_, err := fs.Stat(modelFS, "model/model.onnx")
	return err == nil
}

// Embedder is the embed.Embedder of bge-small-en-v1.5. Its Embed tokenizes
// each text, less a leading speaker label (withoutSpeaker); an empty or
// whitespace-only text, or one with no tokens, gets a zero vector. A text
// of more than MaxTokens tokens is cut into consecutive chunks, encoded
// each as [CLS] chunk [SEP], and its vector is the mean of the chunks'
// vectors weighted by their token counts, normalised to unit length. The
// chunks of all texts are encoded in batches spread over GOMAXPROCS
// goroutines (batch.Embed). The model is read on the first call that needs
// it, so that a process that embeds nothing does not pay for it.
type Embedder struct {
	// model returns the model, reading it on the first call (a
	// sync.OnceValues).
	model func() (*loaded, error)
}

// loaded is the model, its weights read.
type loaded struct {
	batch batch.Embedder
	tok   *bert.Tokenizer
	enc   *bert.Encoder
}

// New returns the embedder of the built-in model, which reads its files
// (about 130 MB of weights) on the first Embed; later calls of New share
// it. It returns ErrUnavailable when the binary has no model files.
func New() (*Embedder, error) {
	if !Available() {
		return nil, ErrUnavailable
	}
	return builtIn, nil
}

var builtIn = &Embedder{model: sync.OnceValues(func() (*loaded, error) { return load(modelFS, "model") })}

// Load reads the model from dir in fsys: model.onnx and tokenizer.json, as
// the Maven artifact ships them (renamed), and returns its embedder.
func Load(fsys fs.FS, dir string) (*Embedder, error) {
	m, err := load(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &Embedder{model: func() (*loaded, error) { return m, nil }}, nil
}

func load(fsys fs.FS, dir string) (*loaded, error) {
	// Loading makes about twice the weights in garbage (each tensor's
	// encoding, the ONNX layout of the linear weights); a tight collector
	// while it runs keeps the process's peak memory near what it keeps.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	tj, err := fs.ReadFile(fsys, dir+"/tokenizer.json")
	if err != nil {
		return nil, fmt.Errorf("bge: %w", err)
	}
	tok, err := readTokenizer(tj)
	if err != nil {
		return nil, fmt.Errorf("bge: tokenizer.json: %w", err)
	}
	w, err := readWeights(fsys, dir+"/model.onnx")
	if err != nil {
		return nil, fmt.Errorf("bge: %w", err)
	}
	enc, err := bert.NewEncoder(w, bert.Config{Pooling: bert.CLSPooling, MaxTokens: MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("bge: %w", err)
	}
	// Give that garbage back to the system now rather than leave a
	// serve's memory at its peak.
	debug.FreeOSMemory()
	if enc.Layers() != layers {
		return nil, fmt.Errorf("bge: the weights have %d layers, want %d", enc.Layers(), layers)
	}
	if tok.VocabularySize() != enc.Vocabulary() {
		return nil, fmt.Errorf("bge: %d pieces but %d embeddings", tok.VocabularySize(), enc.Vocabulary())
	}
	return &loaded{
		batch: batch.Embedder{
			Model: batch.Model{
				Tokenize:    func(text string) []int32 { return tok.Encode(withoutSpeaker(text)) },
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

// Embed implements embed.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := e.model()
	if err != nil {
		return nil, err
	}
	return m.batch.Embed(ctx, texts)
}

// Dimension implements embed.Embedder.
func (e *Embedder) Dimension() int { return Dimension }

// readWeights reads the ONNX model's float32 weights under PyTorch's names
// and shapes, a field at a time (onnx.ReadAt), not the whole file at once.
func readWeights(fsys fs.FS, name string) (map[string]bert.Tensor, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("%s: the file system cannot read at an offset", name)
	}
	m, err := onnx.ReadAt(r, info.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ts, err := m.TorchLinears()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	w := make(map[string]bert.Tensor, len(ts))
	for k, t := range ts {
		w[k] = bert.Tensor{Shape: t.Shape, Data: t.Data}
	}
	return w, nil
}

// readTokenizer makes the tokenizer of a Hugging Face tokenizer.json,
// which must describe the BERT uncased tokenizer bert.Tokenizer
// implements: a lower-casing BertNormalizer that handles CJK characters,
// the BertPreTokenizer and WordPiece with "##" continuations and [UNK].
func readTokenizer(data []byte) (*bert.Tokenizer, error) {
	var tj struct {
		Normalizer struct {
			Type               string `json:"type"`
			CleanText          bool   `json:"clean_text"`
			HandleChineseChars bool   `json:"handle_chinese_chars"`
			StripAccents       *bool  `json:"strip_accents"`
			Lowercase          bool   `json:"lowercase"`
		} `json:"normalizer"`
		PreTokenizer struct {
			Type string `json:"type"`
		} `json:"pre_tokenizer"`
		Model struct {
			Type                    string           `json:"type"`
			UnkToken                string           `json:"unk_token"`
			ContinuingSubwordPrefix string           `json:"continuing_subword_prefix"`
			MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
			Vocab                   map[string]int32 `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, err
	}
	n, m := tj.Normalizer, tj.Model
	if n.Type != "BertNormalizer" || !n.CleanText || !n.HandleChineseChars || !n.Lowercase || (n.StripAccents != nil && !*n.StripAccents) ||
		tj.PreTokenizer.Type != "BertPreTokenizer" ||
		m.Type != "WordPiece" || m.UnkToken != "[UNK]" || m.ContinuingSubwordPrefix != "##" || m.MaxInputCharsPerWord != 100 {
		return nil, errors.New("not the BERT uncased WordPiece tokenizer")
	}
	pieces := make([]string, len(m.Vocab))
	for p, id := range m.Vocab {
		if id < 0 || int(id) >= len(pieces) || pieces[id] != "" {
			return nil, fmt.Errorf("piece %q has id %d: the ids are not 0 to %d, each once", p, id, len(pieces)-1)
		}
		pieces[id] = p
	}
	return bert.NewTokenizerOf(pieces)
}

// Name implements embed.Embedder.
func (e *Embedder) Name() string { return Name }

// Tokenizer returns the embedder's tokenizer, or nil if the model does not
// load.
func (e *Embedder) Tokenizer() *bert.Tokenizer {
	m, err := e.model()
	if err != nil {
		return nil
	}
	return m.tok
}

// Encoder returns the embedder's encoder, or nil if the model does not
// load.
func (e *Embedder) Encoder() *bert.Encoder {
	m, err := e.model()
	if err != nil {
		return nil
	}
	return m.enc
}

// batchTokens is about how many tokens one worker encodes at a time.
const batchTokens = 256

// minSimilarity is the default threshold of memory search with this
// embedder; see MinSimilarity.
const minSimilarity = 0.45

// MinSimilarity implements embed.Thresholder.
func (e *Embedder) MinSimilarity() float64 { return minSimilarity }
