package bge

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/internal/modeltest"
)

// model returns the built-in embedder, loaded, or skips the test with one
// line when the binary has no model files; under CI=true it fails instead.
func model(t testing.TB) *Embedder {
	t.Helper()
	e, err := New()
	if err == nil {
		_, err = e.model()
	}
	modeltest.Require(t, err, "scripts/provision-bge.sh")
	return e
}

// TestMatchesReference compares the model with testdata/fixture.json,
// written by testdata/gen-fixture.py from onnxruntime running the same
// model.onnx with the Hugging Face tokenizer of its tokenizer.json: token
// ids exactly, vectors within 1e-4 per component (modeltest.CheckBERT). A
// text with a speaker label gets the vector of the text without it, which
// the fixture also holds.
func TestMatchesReference(t *testing.T) {
	e := model(t)
	modeltest.CheckBERT(t, "testdata/fixture.json", modeltest.BERTModel{
		Tokenize: e.Tokenizer().Encode, Embed: e.Embed, Encode: e.Encoder().Encode,
		MaxTokens: MaxTokens, Embeds: withoutSpeaker, Tolerance: 1e-4,
	})
}

// TestShortTextAlone checks that a short text embedded alone, whose matrix
// products are shared out among the processors (a search's question),
// gets the vector it gets in a batch.
func TestShortTextAlone(t *testing.T) {
	e := model(t)
	texts := []string{"italian dinner", "The quick brown fox jumps over the lazy dog.", "I love pizza 🍕 and sushi 🍣!", "payment"}
	batch, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one, err := e.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if d := modeltest.MaxDiff(one[0], batch[i]); d > 1e-5 {
			t.Errorf("%q alone differs from its vector in a batch by %.3g", text, d)
		}
	}
}
