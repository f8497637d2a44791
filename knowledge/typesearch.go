package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
)

// Semantic fallback of SearchEntityTypes.
const (
	// MinTypeSimilarity is the cosine similarity from which a type found
	// by its embeddings counts as a match. With the local embedder, which
	// sees word forms rather than meaning, unrelated one-word texts reach
	// about 0.15 through hash collisions and shared trigrams; 0.2 keeps
	// most of that noise out while "payments" still finds invoice.
	MinTypeSimilarity = 0.2
	// MaxVectorTypeMatches bounds the types the fallback adds.
	MaxVectorTypeMatches = 3
)

// typeIndex holds the embeddings of entity types, keyed by the texts they
// are embedded from (TypeTexts): a new type, or a new version of one, is
// embedded when it is first searched, and a version seen before (by this
// user or another) is not embedded again.
type typeIndex struct {
	mu   sync.Mutex
	vecs map[string][][]float32
}

// maxTypeIndex bounds the cached type embeddings; past it the cache starts
// again (schemas are few per user, so this is many users' worth).
const maxTypeIndex = 10_000

// SearchEntityTypes is EntityTypes with the semantic fallback of the
// specification: when keyword matching scores below GoodKeywordScore, the
// keyword is embedded and compared with every entity type's embeddings (see
// TypeTexts); a type's similarity is the best cosine similarity of any of
// its texts, so that a one-word keyword is not diluted by a long schema.
// Types whose similarity reaches MinTypeSimilarity are added, at most
// MaxVectorTypeMatches of them, with MatchType MatchVector and their
// similarity as Score, and the search method becomes SearchVector. Keyword
// matches keep their keyword score; the merged list is ordered by score,
// then name.
func (s *Service) SearchEntityTypes(ctx context.Context, c Caller, keyword string) (TypeSearch, error) {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return TypeSearch{}, err
	}
	all := set.All()
	res := entityTypes(all, keyword)
	if res.Method != SearchKeyword || res.BestKeywordScore() >= GoodKeywordScore {
		return res, nil
	}
	vecs, err := s.typeVectors(ctx, all)
	if err != nil {
		return TypeSearch{}, err
	}
	q, err := s.embedder.Embed(ctx, []string{keyword})
	if err != nil {
		return TypeSearch{}, fmt.Errorf("knowledge: embed keyword: %w", err)
	}
	found := map[string]bool{}
	for _, m := range res.Matches {
		found[m.Schema.EntityType] = true
	}
	var semantic []TypeMatch
	for _, sc := range all {
		vs, ok := vecs[sc.EntityType]
		if !ok || found[sc.EntityType] {
			continue
		}
		sim := 0.0
		for _, v := range vs {
			sim = max(sim, cosine(q[0], v))
		}
		if sim >= MinTypeSimilarity {
			semantic = append(semantic, TypeMatch{Schema: sc, Score: roundScore(sim), MatchType: MatchVector})
		}
	}
	if len(semantic) == 0 {
		return res, nil
	}
	byScore := func(a, b TypeMatch) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Schema.EntityType, b.Schema.EntityType))
	}
	slices.SortStableFunc(semantic, byScore)
	if len(semantic) > MaxVectorTypeMatches {
		semantic = semantic[:MaxVectorTypeMatches]
	}
	res.Matches = append(res.Matches, semantic...)
	slices.SortStableFunc(res.Matches, byScore)
	res.Method = SearchVector
	return res, nil
}

// typeVectors returns the embeddings of the given types, by type, embedding
// those whose texts it has not embedded before.
func (s *Service) typeVectors(ctx context.Context, all []*schema.Schema) (map[string][][]float32, error) {
	ix := &s.types
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.vecs == nil || len(ix.vecs) > maxTypeIndex {
		ix.vecs = map[string][][]float32{}
	}
	keys := make([]string, len(all))
	var texts []string
	var missing []int
	counts := make([]int, len(all))
	for i, sc := range all {
		t := TypeTexts(sc)
		keys[i] = strings.Join(t, "\x1e")
		if _, ok := ix.vecs[keys[i]]; !ok && !slices.Contains(keys[:i], keys[i]) {
			texts = append(texts, t...)
			counts[i] = len(t)
			missing = append(missing, i)
		}
	}
	if len(texts) > 0 {
		vecs, err := s.embedder.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("knowledge: embed entity types: %w", err)
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("knowledge: embed entity types: %d vectors for %d texts", len(vecs), len(texts))
		}
		for _, i := range missing {
			ix.vecs[keys[i]], vecs = vecs[:counts[i]], vecs[counts[i]:]
		}
	}
	out := make(map[string][][]float32, len(all))
	for i, sc := range all {
		out[sc.EntityType] = ix.vecs[keys[i]]
	}
	return out, nil
}

// TypeTexts are the texts an entity type is embedded as: its name (with
// underscores as spaces), its description, each field's name with its
// description, and all of them together.
func TypeTexts(sc *schema.Schema) []string {
	name := strings.ReplaceAll(sc.EntityType, "_", " ")
	out := []string{name, sc.Description}
	for _, f := range sc.FieldNames() {
		line := strings.ReplaceAll(f, "_", " ")
		if d := sc.Fields[f].Description; d != "" {
			line += ": " + d
		}
		out = append(out, line)
	}
	out = append(out, name+". "+strings.Join(out[1:], "\n"))
	return out
}

// cosine is the cosine similarity of two vectors; 0 when either is zero or
// their lengths differ.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// sumSquares returns the sum of the squares of v's components, as cosine
// adds them up.
func sumSquares(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return n
}

// cosinePacked returns cosine(a, vector.UnpackInt8(b)), exactly, without
// unpacking b: norm is sumSquares(a). A context load with a topic compares
// the topic with up to 2,000 cached vectors, which unpacked cost an
// allocation and a pass over memory each. 0 for a b of another dimension.
func cosinePacked(a []float32, norm float64, b []byte) float64 {
	dot, nb, ok := vector.DotInt8(a, b)
	if !ok || norm == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(norm) * math.Sqrt(nb))
}

// roundScore keeps four decimals, so that scores compare and print stably.
func roundScore(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }
