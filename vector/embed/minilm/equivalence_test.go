package minilm

import (
	"testing"

	"github.com/cairnkg/cairn/vector/embed/internal/modeltest"
)

// model returns the built-in embedder, or skips the test with one line
// when the binary has no model files; under CI=true it fails instead.
func model(t testing.TB) *Embedder {
	t.Helper()
	e, err := New()
	modeltest.Require(t, err, "scripts/provision-minilm.sh")
	return e
}

// TestMatchesReference compares the model with testdata/fixture.json,
// written by testdata/gen-fixture.py from sentence-transformers on
// PyTorch: token ids exactly, vectors within 1e-4 per component
// (modeltest.CheckBERT).
func TestMatchesReference(t *testing.T) {
	e := model(t)
	modeltest.CheckBERT(t, "testdata/fixture.json", modeltest.BERTModel{
		Tokenize: e.Tokenizer().Encode, Embed: e.Embed, Encode: e.Encoder().Encode,
		MaxTokens: MaxTokens, Tolerance: 1e-4,
	})
}
