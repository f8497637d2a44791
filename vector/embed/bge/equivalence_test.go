package bge

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/internal/modeltest"
)

// fixture is testdata/fixture.json, written by testdata/gen-fixture.py
// from the reference implementation (onnxruntime on the same model.onnx,
// the Hugging Face tokenizer of its tokenizer.json).
type fixture struct {
	Reference string `json:"reference"`
	Cases     []struct {
		Text    string    `json:"text"`
		IDs     []int32   `json:"ids"`
		Vector  []float32 `json:"vector"`
		Chunked []float32 `json:"chunked"`
	} `json:"cases"`
}

// tolerance is the largest difference allowed per vector component
// between this package and the reference.
const tolerance = 1e-4

// model returns the built-in embedder, or skips the test with one line
// when the binary has no model files; under CI=true it fails instead.
func model(t testing.TB) *Embedder {
	t.Helper()
	e, err := New()
	if err == nil {
		_, err = e.model()
	}
	modeltest.Require(t, err, "scripts/provision-bge.sh")
	return e
}

// TestTokenizerMatchesReference compares the token ids with those of the
// reference tokenizer, exactly.
func TestTokenizerMatchesReference(t *testing.T) {
	e := model(t)
	var f fixture
	modeltest.ReadFixture(t, "testdata/fixture.json", &f)
	for _, c := range f.Cases {
		got := e.Tokenizer().Encode(c.Text)
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

// TestEmbedMatchesReference checks Embed on the fixture's texts, all in
// one call so that stacked sequences are seen not to mix: a text of at
// most MaxTokens tokens gets the reference vector (a text with a speaker
// label that of the same text without it, which the fixture also holds),
// an empty or
// whitespace-only text a zero vector, and a longer text the reference
// model's token-weighted mean of its chunks; the first chunk of a long
// text, encoded alone, is the reference vector (which reads only it).
func TestEmbedMatchesReference(t *testing.T) {
	e := model(t)
	var f fixture
	modeltest.ReadFixture(t, "testdata/fixture.json", &f)
	texts := make([]string, len(f.Cases))
	for i, c := range f.Cases {
		texts[i] = c.Text
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	byText := map[string][]float32{}
	for _, c := range f.Cases {
		byText[c.Text] = c.Vector
	}
	long, labelled, worst := 0, 0, 0.0
	check := func(text, what string, got, want []float32) {
		d := modeltest.MaxDiff(got, want)
		worst = max(worst, d)
		if d > tolerance {
			t.Errorf("%.40q: %s: a component differs by %.3g from the reference (%s)", text, what, d, f.Reference)
		}
	}
	for i, c := range f.Cases {
		switch {
		case strings.TrimSpace(c.Text) == "" || len(c.IDs) == 0:
			if slices.ContainsFunc(got[i], func(v float32) bool { return v != 0 }) {
				t.Errorf("%q: want a zero vector", c.Text)
			}
		case withoutSpeaker(c.Text) != c.Text:
			labelled++
			want, ok := byText[withoutSpeaker(c.Text)]
			if !ok {
				t.Fatalf("%q: the fixture has no case of %q", c.Text, withoutSpeaker(c.Text))
			}
			check(c.Text, "vector without the speaker label", got[i], want)
		case len(c.IDs) <= MaxTokens:
			check(c.Text, "vector", got[i], c.Vector)
		default:
			long++
			check(c.Text, "chunked vector", got[i], c.Chunked)
			first := e.Encoder().Encode([][]int32{c.IDs[:MaxTokens]})
			check(c.Text, "first chunk", first[0], c.Vector)
		}
	}
	// Alone, a short text's matrix products are shared out among the
	// processors (a search's question): the same vector. Four such texts
	// are enough to see it, under the race detector too.
	alone := 0
	for i, c := range f.Cases {
		if len(c.IDs) == 0 || len(c.IDs) > 32 || alone == 4 {
			continue
		}
		alone++
		one, err := e.Embed(context.Background(), []string{c.Text})
		if err != nil {
			t.Fatal(err)
		}
		check(c.Text, "vector of the text alone", one[0], got[i])
	}
	if long == 0 || labelled == 0 {
		t.Errorf("the fixture has %d texts over MaxTokens tokens and %d with a speaker label, want some of each", long, labelled)
	}
	t.Logf("%d texts, largest difference from the reference %.3g", len(f.Cases), worst)
}
