package knowledge_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// conceptEmbedder is a test embedder that understands meaning through a
// fixed lexicon: each dimension is a concept, and a text's vector counts the
// words of each concept it contains. "food" and "recipe" are close although
// they share no letters, which the local embedder cannot do.
type conceptEmbedder struct {
	calls atomic.Int64
}

var concepts = [][]string{
	{"food", "meal", "meals", "recipe", "dish", "cooking", "ingredients"},
	{"money", "payment", "invoice", "amount"},
	{"person", "people", "friend"},
}

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts)+1)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			for c, words := range concepts {
				for _, cw := range words {
					if w == cw {
						v[c]++
					}
				}
			}
		}
		v[len(concepts)] = 0.01 // no text is the zero vector
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

func (e *conceptEmbedder) Dimension() int { return len(concepts) + 1 }
func (e *conceptEmbedder) Name() string   { return "test:concepts" }

func TestSearchEntityTypesKeywordFirst(t *testing.T) {
	s, _ := newService(t)
	for _, kw := range []string{"", "invoice", "email", "due_date"} {
		got, err := s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, kw)
		if err != nil {
			t.Fatal(err)
		}
		if got.Method == knowledge.SearchVector {
			t.Errorf("%q: a good keyword match fell back to vectors", kw)
		}
		for _, m := range got.Matches {
			if m.MatchType == knowledge.MatchVector {
				t.Errorf("%q: %s is a vector match", kw, m.Schema.EntityType)
			}
		}
	}
}

func TestSearchEntityTypesLocalFallback(t *testing.T) {
	s, _ := newService(t)
	// "payments" matches nothing by keyword (no field or word equals it),
	// but the local embedder's trigrams bring it to invoice's "payment".
	if kw, err := s.EntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "payments"); err != nil || kw.BestKeywordScore() >= knowledge.GoodKeywordScore {
		t.Fatalf("keyword score %d: the premise of this test is gone", kw.BestKeywordScore())
	}
	got, err := s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "payments")
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != knowledge.SearchVector || len(got.Matches) == 0 {
		t.Fatalf("method %s with %d matches, want vector_semantic with some", got.Method, len(got.Matches))
	}
	first := got.Matches[0]
	if first.Schema.EntityType != "invoice" || first.MatchType != knowledge.MatchVector {
		t.Errorf("first match %s via %s, want invoice via vector", first.Schema.EntityType, first.MatchType)
	}
	if first.Score < knowledge.MinTypeSimilarity || first.Score > 1 {
		t.Errorf("similarity %v outside [%v, 1]", first.Score, knowledge.MinTypeSimilarity)
	}
	again, err := s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "payments")
	if err != nil || len(again.Matches) != len(got.Matches) || again.Matches[0].Score != first.Score {
		t.Errorf("a second search differs: %+v, %v", again, err)
	}
}

func TestSearchEntityTypesSemanticAndRebuild(t *testing.T) {
	emb := &conceptEmbedder{}
	s := newServiceWith(t, knowledge.Options{Embedder: emb})
	if err := s.Schemas().Register(t.Context(), &schema.Schema{
		EntityType: "recipe", Version: "1.0", Description: "How to cook a dish.",
		Fields: map[string]schema.Field{"title": {Type: schema.TypeString}, "ingredients": {Type: schema.TypeArray}},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "food")
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != knowledge.SearchVector || len(got.Matches) == 0 || got.Matches[0].Schema.EntityType != "recipe" {
		t.Fatalf("food: %+v, want recipe first by vector", got)
	}
	embedded := emb.calls.Load()
	if _, err := s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "food"); err != nil {
		t.Fatal(err)
	}
	if d := emb.calls.Load() - embedded; d != 1 {
		t.Errorf("a second search embedded %d texts, want 1 (the keyword; types are indexed once)", d)
	}
	// A newly registered type is found without restarting.
	if err := s.Schemas().Register(t.Context(), &schema.Schema{
		EntityType: "restaurant", Version: "1.0", Description: "A place that serves meals.",
		Fields: map[string]schema.Field{"name": {Type: schema.TypeString}},
	}); err != nil {
		t.Fatal(err)
	}
	got, err = s.SearchEntityTypes(t.Context(), knowledge.Caller{UserID: "u"}, "food")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, m := range got.Matches {
		types = append(types, m.Schema.EntityType)
	}
	if len(types) != 2 || types[0] != "recipe" || types[1] != "restaurant" {
		t.Errorf("food after registering restaurant: %v, want [recipe restaurant]", types)
	}
}

// newServiceWith returns a service with options on a fresh embedded store.
func newServiceWith(t *testing.T, opts knowledge.Options) *knowledge.Service {
	t.Helper()
	_, g := openEmbedded(t)
	return knowledge.NewService(g, schema.NewRegistry(), opts)
}
