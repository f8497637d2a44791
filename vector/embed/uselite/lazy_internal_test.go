package uselite

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestWeightsReadOnFirstUse: the built-in embedder answers its name,
// dimension and threshold without reading its weights, reads them once on
// the first use however many uses race for it, and a failure to read them
// is the error of every use.
func TestWeightsReadOnFirstUse(t *testing.T) {
	var loads atomic.Int32
	boom := errors.New("no weights")
	e := lazy(func() (*loadedModel, error) { loads.Add(1); return nil, boom })
	if e.Name() != Name || e.Dimension() != Dimension || e.MinSimilarity() != minSimilarity || loads.Load() != 0 {
		t.Fatalf("name, dimension or threshold read the weights (%d loads)", loads.Load())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := e.Embed(t.Context(), []string{"hello"}); !errors.Is(err, boom) {
				t.Errorf("Embed = %v, want the load's error", err)
			}
		})
	}
	wg.Wait()
	if e.Tokenizer() != nil || e.Encoder() != nil {
		t.Error("a model that could not be read has a tokenizer or an encoder")
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("the weights were read %d times, want once", n)
	}
}
