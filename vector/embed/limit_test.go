package embed

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// coresEmbedder records the core bound and the texts of each call.
type coresEmbedder struct {
	Embedder
	cores   []int
	perCall []int
	fail    string
}

func (c *coresEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.cores = append(c.cores, Cores(ctx))
	c.perCall = append(c.perCall, len(texts))
	for _, t := range texts {
		if t == c.fail {
			return nil, errors.New("down")
		}
	}
	return c.Embedder.Embed(ctx, texts)
}

// TestLimit: a limited embedder keeps the space and the vectors, passes
// its texts in one call (a batch), bounded to its cores, and its
// embedder's errors.
func TestLimit(t *testing.T) {
	local := NewLocal()
	texts := []string{"coffee", "tea", "lasagna", "invoice", "train", "garden", "rent", "budget"}
	want, err := local.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	c := &coresEmbedder{Embedder: local}
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
	if !cmp.Equal(c.cores, []int{3}) || !cmp.Equal(c.perCall, []int{len(texts)}) {
		t.Errorf("calls with cores %v and texts %v, want one call of %d texts bounded to 3", c.cores, c.perCall, len(texts))
	}
	if Limit(c, 0).Embed(t.Context(), texts[:1]); c.cores[len(c.cores)-1] != 1 {
		t.Errorf("Limit(e, 0) bounds calls to %d cores, want 1", c.cores[len(c.cores)-1])
	}
	c = &coresEmbedder{Embedder: local, fail: "lasagna"}
	if _, err := Limit(c, 2).Embed(t.Context(), texts); err == nil {
		t.Error("an embedder error was lost")
	}
}

// TestCores: no bound unless WithCores set one, which is at least 1.
func TestCores(t *testing.T) {
	ctx := t.Context()
	if n := Cores(ctx); n != 0 {
		t.Errorf("Cores of a plain context = %d, want 0", n)
	}
	if n := Cores(WithCores(ctx, 2)); n != 2 {
		t.Errorf("Cores = %d, want 2", n)
	}
	if n := Cores(WithCores(ctx, -1)); n != 1 {
		t.Errorf("Cores after WithCores(-1) = %d, want 1", n)
	}
}
