package embed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countingEmbedder records how many of its calls run at once and how many
// texts each gets.
type countingEmbedder struct {
	Embedder
	mu            sync.Mutex
	running, peak int
	perCall       []int
	fail          string
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.running++
	c.peak = max(c.peak, c.running)
	c.perCall = append(c.perCall, len(texts))
	c.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
	for _, t := range texts {
		if t == c.fail {
			return nil, errors.New("down")
		}
	}
	return c.Embedder.Embed(ctx, texts)
}

func TestLimit(t *testing.T) {
	local := NewLocal()
	texts := []string{"coffee", "tea", "lasagna", "invoice", "train", "garden", "rent", "budget"}
	want, err := local.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingEmbedder{Embedder: local}
	l := Limit(c, 3)
	if l.Name() != local.Name() || l.Dimension() != local.Dimension() {
		t.Errorf("Limit changed the space: %s/%d", l.Name(), l.Dimension())
	}
	got, err := l.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("vectors differ from the embedder's own, in order (-want +got):\n%s", d)
	}
	if c.peak > 3 || c.peak < 1 {
		t.Errorf("%d calls ran at once, want at most 3", c.peak)
	}
	for _, n := range c.perCall {
		if n != 1 {
			t.Fatalf("a call got %d texts, want one each: %v", n, c.perCall)
		}
	}

	c = &countingEmbedder{Embedder: local, fail: "lasagna"}
	if _, err := Limit(c, 2).Embed(t.Context(), texts); err == nil {
		t.Error("an embedder error was lost")
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Limit(&countingEmbedder{Embedder: local}, 1).Embed(ctx, texts)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
