package embed_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/vector/embed"
)

// TestPaced checks that a paced embedder waits before each chunk, gives
// the vectors of the embedder it wraps in order, and stops when waiting
// fails.
func TestPaced(t *testing.T) {
	local := embed.NewLocal()
	texts := []string{"one", "two", "three", "four", "five", "six", "seven"}
	want, err := local.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	p := embed.Paced(local, 3, func(context.Context) error { waits++; return nil })
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paced vectors differ (-want +got):\n%s", diff)
	}
	if waits != 3 {
		t.Errorf("waited %d times for 7 texts in chunks of 3, want 3", waits)
	}
	if p.Name() != local.Name() || p.Dimension() != local.Dimension() {
		t.Errorf("paced embedder is %s/%d, want %s/%d", p.Name(), p.Dimension(), local.Name(), local.Dimension())
	}

	stop := errors.New("stopping")
	waits = 0
	p = embed.Paced(local, 3, func(context.Context) error {
		if waits++; waits == 2 {
			return stop
		}
		return nil
	})
	if _, err := p.Embed(t.Context(), texts); !errors.Is(err, stop) {
		t.Errorf("embed with a wait that fails: %v, want its error", err)
	}
}
