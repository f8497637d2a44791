package main

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embed/uselite"
)

// TestBackgroundEmbedderWaitsForALull checks the worker's embedder with
// the built-in model on two cores: it embeds nothing while a tool call is
// in flight, and gives the model's vectors once the calls pause. Other
// embedders are used as they are.
func TestBackgroundEmbedderWaitsForALull(t *testing.T) {
	if backgroundEmbedder(embed.NewLocal(), &mcp.Activity{}, 2) != nil {
		t.Error("the lexical embedder is paced; it is cheap and should be used as it is")
	}
	model, err := uselite.New()
	if errors.Is(err, uselite.ErrUnavailable) {
		t.Skip("the model files are not built in: run scripts/provision-model.sh")
	}
	if err != nil {
		t.Fatal(err)
	}
	activity := &mcp.Activity{}
	bg := backgroundEmbedder(model, activity, 2)
	if bg.Name() != model.Name() {
		t.Fatalf("background embedder %q, want the model's space %q", bg.Name(), model.Name())
	}
	end := activity.Begin()
	type result struct {
		vecs [][]float32
		err  error
	}
	done := make(chan result, 1)
	texts := []string{"person: Ada Lovelace", "company: Acme Anvils"}
	go func() {
		vecs, err := bg.Embed(t.Context(), texts)
		done <- result{vecs, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the worker embedded during a call (%v)", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	end()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	want, err := model.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, r.vecs); diff != "" {
		t.Errorf("the background vectors are not the model's (-model +background):\n%s", diff)
	}
}
