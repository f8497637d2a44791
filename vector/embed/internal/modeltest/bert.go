package modeltest

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// BERTFixture is the testdata/fixture.json of a BERT model (minilm, bge),
// which its package's testdata/gen-fixture.py writes from the model's
// reference implementation: for each text, its token ids without [CLS]
// and [SEP], the vector of its first MaxTokens ids, and for a longer text
// the reference model's token-weighted mean of its chunks' vectors.
type BERTFixture struct {
	Reference string `json:"reference"`
	Cases     []struct {
		Text    string    `json:"text"`
		IDs     []int32   `json:"ids"`
		Vector  []float32 `json:"vector"`
		Chunked []float32 `json:"chunked"`
	} `json:"cases"`
}

// BERTModel is what CheckBERT checks of a model.
type BERTModel struct {
	// Tokenize and Embed are the model's; Encode encodes sequences of ids
	// without [CLS] and [SEP], as its encoder does.
	Tokenize  func(string) []int32
	Embed     func(context.Context, []string) ([][]float32, error)
	Encode    func(seqs [][]int32, cores int) [][]float32
	MaxTokens int
	// Embeds, when set, is the text the model embeds for a given one (bge
	// leaves a speaker label out); the fixture must then hold a case of
	// that text, whose vector is expected.
	Embeds func(string) string
	// Tolerance is the largest difference allowed per component.
	Tolerance float64
}

// CheckBERT compares a model with the fixture at path. Token ids must be
// equal. Embed runs on all the texts in one call, so that stacked
// sequences are seen not to mix: a text of at most MaxTokens tokens gets
// the reference vector, an empty or whitespace-only text a zero vector,
// and a longer text the reference model's chunked vector; the first chunk
// of a long text, encoded alone, is the reference vector (which reads
// only it). The fixture must hold a long text. It logs and returns the
// largest difference seen.
func CheckBERT(t *testing.T, path string, m BERTModel) float64 {
	t.Helper()
	var f BERTFixture
	ReadFixture(t, path, &f)
	texts := make([]string, len(f.Cases))
	byText := make(map[string][]float32, len(f.Cases))
	for i, c := range f.Cases {
		texts[i] = c.Text
		byText[c.Text] = c.Vector
		if got := m.Tokenize(c.Text); !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("tokens of %q\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	long, split, worst := 0, 0, 0.0
	check := func(text, what string, got, want []float32) {
		t.Helper()
		d := MaxDiff(got, want)
		worst = max(worst, d)
		if d > m.Tolerance {
			t.Errorf("%.40q: %s: a component differs by %.3g from the reference (%s)", text, what, d, f.Reference)
		}
	}
	for i, c := range f.Cases {
		switch {
		case m.Embeds != nil && m.Embeds(c.Text) != c.Text:
			want, ok := byText[m.Embeds(c.Text)]
			if !ok {
				t.Fatalf("%q: the fixture has no case of %q, the text the model embeds", c.Text, m.Embeds(c.Text))
			}
			check(c.Text, "vector of "+m.Embeds(c.Text), got[i], want)
		case strings.TrimSpace(c.Text) == "" || len(c.IDs) == 0:
			if slices.ContainsFunc(got[i], func(v float32) bool { return v != 0 }) {
				t.Errorf("%q: want a zero vector", c.Text)
			}
		case len(c.IDs) <= m.MaxTokens:
			check(c.Text, "vector", got[i], c.Vector)
			// A short text's products shared among goroutines or not:
			// the same vector to the bit (a few texts show it; each
			// check encodes twice, slowly under the race detector).
			if split < 3 {
				split++
				one, two := m.Encode([][]int32{c.IDs}, 1)[0], m.Encode([][]int32{c.IDs}, 2)[0]
				if !slices.Equal(one, two) {
					t.Errorf("%q: Encode on one core and on two differ", c.Text)
				}
			}
		default:
			long++
			check(c.Text, "chunked vector", got[i], c.Chunked)
			check(c.Text, "first chunk", m.Encode([][]int32{c.IDs[:m.MaxTokens]}, 1)[0], c.Vector)
		}
	}
	if long == 0 {
		t.Error("the fixture has no text over MaxTokens tokens")
	}
	t.Logf("%d texts, largest difference from the reference %.3g", len(f.Cases), worst)
	return worst
}
