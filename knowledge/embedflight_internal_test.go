package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/vector/embed"
)

// gatedEmbedder embeds with the local embedder, counting the texts it
// was given, after its gate opens.
type gatedEmbedder struct {
	embed.Embedder
	gate   chan struct{}
	called chan struct{} // receives each time Embed is entered
	mu     sync.Mutex
	texts  int
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.called <- struct{}{}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.mu.Lock()
	g.texts += len(texts)
	g.mu.Unlock()
	return g.Embedder.Embed(ctx, texts)
}

func flightTexts(n int) (texts, hashes []string) {
	for i := range n {
		t := fmt.Sprintf("person Quill %06d, company Co %d", i, i%7)
		texts, hashes = append(texts, t), append(hashes, entityTextHash(t))
	}
	return texts, hashes
}

// TestConcurrentLoadsEmbedATextOnce has loads want the same texts while
// the first is embedding them: the others wait for its vectors, the
// model sees each text once, and every load gets the vectors a load of
// its own would have computed.
func TestConcurrentLoadsEmbedATextOnce(t *testing.T) {
	const loads = 6
	g := &gatedEmbedder{Embedder: embed.NewLocal(), gate: make(chan struct{}), called: make(chan struct{}, loads)}
	texts, hashes := flightTexts(40)
	want, err := embed.NewLocal().Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var waits sync.WaitGroup
	waits.Add(loads - 1)
	f := &embedFlights{waiting: waits.Done}
	type result struct {
		vecs [][]float32
		own  []bool
		err  error
	}
	results := make(chan result, loads)
	run := func(texts, hashes []string) {
		vecs, own, err := f.embed(t.Context(), g, texts, hashes)
		results <- result{vecs, own, err}
	}
	go run(texts, hashes)
	<-g.called // the first load is embedding
	for k := 1; k < loads; k++ {
		// Each later load wants the texts in another order.
		perm, hs := slices.Clone(texts), slices.Clone(hashes)
		slices.Reverse(perm)
		slices.Reverse(hs)
		if k%2 == 0 {
			perm, hs = texts, hashes
		}
		go func() {
			r := make(chan result, 1)
			vecs, own, err := f.embed(t.Context(), g, perm, hs)
			if err == nil && k%2 == 1 {
				slices.Reverse(vecs)
				slices.Reverse(own)
			}
			r <- result{vecs, own, err}
			results <- <-r
		}()
	}
	waits.Wait() // every later load waits for the first one's texts
	close(g.gate)
	owners := 0
	for range loads {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !slices.EqualFunc(r.vecs, want, slices.Equal[[]float32]) {
			t.Fatal("a load got other vectors than its texts'")
		}
		if r.own[0] {
			owners++
		}
	}
	if g.texts != len(texts) {
		t.Errorf("the model embedded %d texts for %d loads of %d, want %d", g.texts, loads, len(texts), len(texts))
	}
	if owners != 1 {
		t.Errorf("%d loads say they embedded the texts, want 1", owners)
	}
}

// TestEmbedFlightFailureIsRetried checks that a load waiting for texts
// another load was embedding embeds them itself when that one fails (its
// client went away, say), rather than failing too.
func TestEmbedFlightFailureIsRetried(t *testing.T) {
	g := &gatedEmbedder{Embedder: embed.NewLocal(), gate: make(chan struct{}), called: make(chan struct{}, 2)}
	texts, hashes := flightTexts(5)
	var waiting sync.WaitGroup
	waiting.Add(1)
	f := &embedFlights{waiting: waiting.Done}
	first, cancel := context.WithCancel(t.Context())
	failed := make(chan error, 1)
	go func() {
		_, _, err := f.embed(first, g, texts, hashes)
		failed <- err
	}()
	<-g.called
	done := make(chan error, 1)
	var vecs [][]float32
	var own []bool
	go func() {
		var err error
		vecs, own, err = f.embed(t.Context(), g, texts, hashes)
		done <- err
	}()
	waiting.Wait()
	cancel()
	if err := <-failed; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first load: %v, want its cancellation", err)
	}
	<-g.called // the second load embeds them itself
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatalf("the waiting load failed with the first: %v", err)
	}
	want, _ := embed.NewLocal().Embed(t.Context(), texts)
	if !slices.EqualFunc(vecs, want, slices.Equal[[]float32]) || !own[0] {
		t.Fatalf("the waiting load got %d vectors (own %v), want its texts' own", len(vecs), own)
	}
}
