package embed

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"testing"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embedOne(t *testing.T, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(t.Context(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return v[0]
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func TestLocalDimensionAndName(t *testing.T) {
	e := NewLocal()
	if got := e.Dimension(); got != 384 {
		t.Errorf("Dimension() = %d, want 384", got)
	}
	if got, want := e.Name(), "local:hash-ngram-v1:384"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
}

func TestLocalDeterministicUnitLength(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{name: "sentence", text: "The invoice payment is overdue."},
		{name: "one word", text: "invoice"},
		{name: "digit", text: "7"},
		{name: "unicode", text: "Straße café 東京タワー naïve"},
		{name: "repeated", text: strings.Repeat("alpha beta ", 300)},
		{name: "invalid utf8", text: "ab\xffcd ef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := embedOne(t, NewLocal(), tt.text)
			b := embedOne(t, NewLocal(), tt.text)
			if len(a) != LocalDimension {
				t.Fatalf("len = %d, want %d", len(a), LocalDimension)
			}
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("component %d differs between runs: %v vs %v", i, a[i], b[i])
				}
			}
			if n := math.Sqrt(dot(a, a)); math.Abs(n-1) > 1e-5 {
				t.Errorf("norm = %v, want 1", n)
			}
		})
	}
}

// TestLocalGolden pins the exact output bits, so that any change to the
// algorithm (or a platform that computes differently) is caught: such a
// change must bump localName's version.
func TestLocalGolden(t *testing.T) {
	v := embedOne(t, NewLocal(), "Invoice #4521 for ACME GmbH is overdue; payment was due on 2024-03-01.")
	h := fnv.New64a()
	for _, x := range v {
		b := math.Float32bits(x)
		h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
	}
	const want uint64 = 0x2ccfa78e1ec0ae69
	if got := h.Sum64(); got != want {
		t.Errorf("golden hash = %#x, want %#x; bump localName's version if the change is intended", got, want)
	}
}

func TestLocalZeroVectors(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{name: "empty", text: ""},
		{name: "whitespace", text: " \t\n\u00a0 "},
		{name: "punctuation", text: "!!! ... ???"},
		{name: "single letters", text: "a b c"},
	}
	e := NewLocal()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := embedOne(t, e, tt.text)
			if len(v) != LocalDimension || !isZero(v) {
				t.Errorf("Embed(%q) = non-zero or len %d, want zero vector of %d", tt.text, len(v), LocalDimension)
			}
		})
	}
}

func TestLocalSimilarity(t *testing.T) {
	tests := []struct {
		name             string
		query, near, far string
	}{
		{name: "invoices", query: "invoice payment overdue", near: "the invoices were paid late", far: "my cat likes fish"},
		{name: "morphology", query: "database migration failed", near: "migrating the databases", far: "the cat sat on the mat"},
		{name: "function words", query: "the quick brown fox", near: "a brown fox jumps", far: "the lazy dog"},
		{name: "case", query: "KUBERNETES Deployment", near: "kubernetes deployments", far: "sourdough bread recipe"},
	}
	e := NewLocal()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := e.Embed(t.Context(), []string{tt.query, tt.near, tt.far})
			if err != nil {
				t.Fatal(err)
			}
			near, far := dot(v[0], v[1]), dot(v[0], v[2])
			if near <= far {
				t.Errorf("cos(query, near) = %.3f <= cos(query, far) = %.3f", near, far)
			}
			if self := dot(v[0], v[0]); math.Abs(self-1) > 1e-5 {
				t.Errorf("cos(query, query) = %v, want 1", self)
			}
		})
	}
}

func TestLocalTokenise(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "lower and split", text: "Hello, World!", want: []string{"hello", "world"}},
		{name: "drop one letter keep one digit", text: "a 7 b x2", want: []string{"7", "x2"}},
		{name: "unicode", text: "ÉCOLE Straße-42", want: []string{"école", "straße", "42"}},
		{name: "combining mark continues word", text: "cafe\u0301 au lait", want: []string{"cafe\u0301", "au", "lait"}},
		{name: "underscore splits", text: "snake_case", want: []string{"snake", "case"}},
		{name: "empty", text: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s scratch
			s.tokenise(tt.text)
			var got []string
			for _, tok := range s.toks {
				if s.buf[tok.start-1] != markStart || s.buf[tok.end] != markEnd {
					t.Errorf("token %q is not wrapped in markers", s.buf[tok.start:tok.end])
				}
				got = append(got, string(s.buf[tok.start:tok.end]))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("tokens = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLocalBatchMatchesSingle(t *testing.T) {
	e := NewLocal()
	texts := []string{"first text", "", "second text about invoices", "third"}
	batch, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != len(texts) {
		t.Fatalf("got %d vectors, want %d", len(batch), len(texts))
	}
	for i, text := range texts {
		single := embedOne(t, e, text)
		for j := range single {
			if single[j] != batch[i][j] {
				t.Fatalf("text %d: batch vector differs from single vector at %d", i, j)
			}
		}
	}
}

func TestLocalConcurrent(t *testing.T) {
	e := NewLocal()
	want := embedOne(t, e, "concurrent embedding of the same text")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				v, err := e.Embed(t.Context(), []string{"concurrent embedding of the same text", strings.Repeat("noise ", 40)})
				if err != nil {
					errs <- err
					return
				}
				for i := range want {
					if v[0][i] != want[i] {
						errs <- errors.New("concurrent result differs")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLocalCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := NewLocal().Embed(ctx, []string{"text"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with cancelled ctx = %v, want context.Canceled", err)
	}
}

const benchText = `Cairn keeps a durable memory for AI agents. Every observation an agent
makes is stored as a source with its fragments, and the reducer folds them into entity
snapshots that later sessions can query. When an invoice from a supplier arrives, the agent
records the amount, the due date and the payment terms, links the invoice to the supplier
entity and to the project it belongs to, and notes whether the payment is overdue. Later,
when the user asks which invoices were paid late last quarter, the agent searches the
knowledge graph and the vector index together: the graph answers the structured part of the
question and the embeddings find the fragments whose wording is close to the question even
when they do not share every word. Because the local embedder is deterministic and needs no
model files, a fresh installation works offline on a laptop, in a container or on a server
without a GPU, and the same text always produces the same vector, so indexes can be rebuilt
and compared across machines. Users who want better recall switch to an OpenAI compatible
provider such as Ollama, vLLM or a hosted service and run cairn reembed to rebuild every
collection with the new model while the old vectors remain available until it finishes.`

func BenchmarkLocalEmbed(b *testing.B) {
	e := NewLocal()
	texts := []string{benchText}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if _, err := e.Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
	}
}
