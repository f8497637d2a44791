// Package batch runs an in-process embedding model over many texts: it
// cuts each text's tokens into chunks the model can read, encodes the
// chunks in batches spread over goroutines, and combines each text's
// chunks into one vector. Cairn's models (uselite, minilm) share it, so
// that long texts are treated alike whatever the model.
package batch

import (
	"context"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/cairnkg/cairn/vector/embed"
)

// Model is what Embed needs of a model.
type Model struct {
	// Tokenize returns the token ids of a text, without any special
	// tokens the model adds around a sequence.
	Tokenize func(string) []int32
	// Encode returns the unit vector of each sequence of at most
	// MaxTokens ids, spreading its work over at most cores goroutines
	// (at least 1); it must be safe for concurrent use.
	Encode func(seqs [][]int32, cores int) [][]float32
	// MaxTokens is the longest sequence Encode takes.
	MaxTokens int
	// BatchTokens is about how many tokens one call of Encode gets: big
	// enough that the weights are reused across many rows, small enough
	// that the activations stay in cache-friendly sizes.
	BatchTokens int
	// Dimension is the length of the vectors.
	Dimension int
}

// chunk is one sequence of at most MaxTokens ids of text t.
type chunk struct {
	text int
	ids  []int32
}

// Embed returns the vector of each text. An empty or whitespace-only text
// gets a zero vector. A text of more than MaxTokens tokens is cut into
// consecutive chunks of MaxTokens tokens (the last one shorter); its
// vector is the mean of the chunks' vectors weighted by their token
// counts, normalised to unit length. The chunks of all texts are encoded
// in batches of about BatchTokens tokens spread over workers goroutines,
// and each batch's Encode may use GOMAXPROCS goroutines: at most the
// bound embed.WithCores puts in ctx, for both. It stops early with ctx's
// error when ctx is done.
func Embed(ctx context.Context, m Model, texts []string, workers int) ([][]float32, error) {
	cores := runtime.GOMAXPROCS(0)
	if n := embed.Cores(ctx); n > 0 {
		cores = n
		workers = min(workers, n)
	}
	out := make([][]float32, len(texts))
	var chunks []chunk
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, m.Dimension)
			continue
		}
		ids := m.Tokenize(t)
		if len(ids) == 0 {
			out[i] = make([]float32, m.Dimension)
			continue
		}
		for start := 0; start < len(ids); start += m.MaxTokens {
			chunks = append(chunks, chunk{text: i, ids: ids[start:min(start+m.MaxTokens, len(ids))]})
		}
	}
	// Cut the chunks into batches of about BatchTokens tokens.
	var batches [][]chunk
	for first, tokens := 0, 0; first < len(chunks); {
		last := first
		tokens = 0
		for last < len(chunks) && (last == first || tokens+len(chunks[last].ids) <= m.BatchTokens) {
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
	for range min(max(workers, 1), len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				seqs := make([][]int32, len(batches[b]))
				for i, c := range batches[b] {
					seqs[i] = c.ids
				}
				copy(vecs[offsets[b]:], m.Encode(seqs, cores))
			}
		}()
	}
	var err error
feed:
	for b := range batches {
		// A done context stops the feed even when a worker is ready too
		// (select would pick either).
		if err = ctx.Err(); err != nil {
			break
		}
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
		sum := make([]float32, m.Dimension)
		for ; ci < len(chunks) && chunks[ci].text == t; ci++ {
			w := float32(len(chunks[ci].ids))
			for j, v := range vecs[ci] {
				sum[j] += w * v
			}
		}
		out[t] = Normalize(sum)
	}
	return out, nil
}

// Normalize scales v to unit length in place and returns it; a zero
// vector stays zero.
func Normalize(v []float32) []float32 {
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

// Embedder is the part of embed.Embedder that the in-process models
// share: Embed runs Embed over Model with Workers goroutines, and
// Dimension is Model's. A model's embedder embeds it and adds Name.
type Embedder struct {
	Model   Model
	Workers int
}

// Embed implements embed.Embedder with Embed (see there).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return Embed(ctx, e.Model, texts, e.Workers)
}

// Dimension implements embed.Embedder: the length of Model's vectors.
func (e *Embedder) Dimension() int { return e.Model.Dimension }
