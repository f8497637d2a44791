package uselite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/internal/batch"
	"github.com/cairnkg/cairn/vector/embed/internal/modeltest"
)

// fixture is testdata/fixture.json, written by testdata/gen-fixture.js
// from the reference TF.js pipeline.
type fixture struct {
	Backend string `json:"backend"`
	Cases   []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float32 `json:"vector"`
	} `json:"cases"`
}

// tolerance is the largest difference allowed per vector component
// between this package and the reference pipeline.
const tolerance = 1e-5

// model returns the built-in embedder, or skips the test with one line
// when the binary has no model files; under CI=true it fails instead.
func model(t testing.TB) *Embedder {
	t.Helper()
	e, err := New()
	modeltest.Require(t, err, "scripts/provision-model.sh")
	return e
}

func readFixture(t *testing.T) fixture {
	t.Helper()
	var f fixture
	modeltest.ReadFixture(t, "testdata/fixture.json", &f)
	if len(f.Cases) == 0 {
		t.Fatal("the fixture has no cases")
	}
	return f
}

// TestTokenizerMatchesReference compares the token ids with those of the
// reference tokenizer, exactly.
func TestTokenizerMatchesReference(t *testing.T) {
	e := model(t)
	for _, c := range readFixture(t).Cases {
		got := e.Tokenizer().Encode(c.Text)
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

// TestEncoderMatchesReference runs the encoder on the reference token ids
// (at most MaxTokens of them, as the reference graph reads) and compares
// each vector with the reference one, component by component. The texts
// are encoded in one batch, to check that stacked sequences do not mix.
func TestEncoderMatchesReference(t *testing.T) {
	e := model(t)
	f := readFixture(t)
	var seqs [][]int32
	var want [][]float32
	var texts []string
	for _, c := range f.Cases {
		if c.Vector == nil {
			continue
		}
		seqs = append(seqs, c.IDs[:min(len(c.IDs), MaxTokens)])
		want = append(want, c.Vector)
		texts = append(texts, c.Text)
	}
	got := e.Encoder().Encode(seqs)
	worst := 0.0
	for i := range got {
		d := modeltest.MaxDiff(got[i], want[i])
		worst = max(worst, d)
		if d > tolerance {
			t.Errorf("%q: a component differs by %.3g from the reference (%s backend)", texts[i], d, f.Backend)
		}
	}
	t.Logf("%d vectors, largest difference from the reference %.3g", len(got), worst)
}

// TestEmbedMatchesReference checks Embed on the fixture's texts: the
// vectors of texts of at most MaxTokens tokens are the reference ones, an
// empty or whitespace-only text gets a zero vector, and a longer text the
// token-weighted mean of its chunks' vectors, renormalised.
func TestEmbedMatchesReference(t *testing.T) {
	e := model(t)
	f := readFixture(t)
	texts := make([]string, len(f.Cases))
	for i, c := range f.Cases {
		texts[i] = c.Text
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	long := 0
	for i, c := range f.Cases {
		switch {
		case strings.TrimSpace(c.Text) == "":
			if slices.ContainsFunc(got[i], func(v float32) bool { return v != 0 }) {
				t.Errorf("%q: want a zero vector", c.Text)
			}
		case len(c.IDs) <= MaxTokens:
			if d := modeltest.MaxDiff(got[i], c.Vector); d > tolerance {
				t.Errorf("%q: a component differs by %.3g from the reference", c.Text, d)
			}
		default:
			long++
			var chunks [][]int32
			for s := 0; s < len(c.IDs); s += MaxTokens {
				chunks = append(chunks, c.IDs[s:min(s+MaxTokens, len(c.IDs))])
			}
			vecs := e.Encoder().Encode(chunks)
			want := make([]float32, Dimension)
			for k, v := range vecs {
				for j := range v {
					want[j] += float32(len(chunks[k])) * v[j]
				}
			}
			want = batch.Normalize(want)
			if d := modeltest.MaxDiff(got[i], want); d > 1e-6 {
				t.Errorf("%q: differs by %.3g from the weighted mean of its chunks", c.Text, d)
			}
			if d := modeltest.MaxDiff(vecs[0], c.Vector); d > tolerance {
				t.Errorf("%q: the first chunk differs by %.3g from the reference", c.Text, d)
			}
		}
	}
	if long == 0 {
		t.Error("the fixture has no text over MaxTokens tokens")
	}
}
