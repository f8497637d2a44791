package knowledge

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// How list_entity_types found a type.
const (
	MatchKeyword = "keyword"
	MatchVector  = "vector"
)

// Search methods reported by EntityTypes.
const (
	SearchAll     = "all"
	SearchKeyword = "keyword_exact"
	SearchVector  = "vector_semantic"
)

// GoodKeywordScore is the keyword score (out of 10) from which a keyword
// match is trusted; below it the semantic fallback is consulted.
const GoodKeywordScore = 3

// TypeMatch is a schema found by EntityTypes with how well it matched.
type TypeMatch struct {
	Schema *schema.Schema
	// Score is 0..1; absent (zero) when no keyword was given.
	Score     float64
	MatchType string
}

// TypeSearch is the answer of EntityTypes.
type TypeSearch struct {
	Matches []TypeMatch
	Method  string
}

// EntityTypes lists the entity types, or with a keyword those that match it.
// Keyword matching is deterministic: per schema, the best of
//
//	10  the type name equals the keyword
//	 6  the type name contains the keyword or a keyword word, or the reverse
//	 5  a field name equals the keyword
//	 4  a field name equals a keyword word
//	 3  a field name contains a keyword word
//	 1  the description mentions a keyword word
//
// Scores are reported divided by 10. Matches are ordered by score, then name.
func (s *Service) EntityTypes(ctx context.Context, c Caller, keyword string) (TypeSearch, error) {
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return TypeSearch{}, err
	}
	return entityTypes(set.All(), keyword), nil
}

// entityTypes is EntityTypes over a user's schemas.
func entityTypes(all []*schema.Schema, keyword string) TypeSearch {
	keyword = strings.ToLower(strings.TrimSpace(keyword))
	if keyword == "" {
		out := TypeSearch{Method: SearchAll}
		for _, sc := range all {
			out.Matches = append(out.Matches, TypeMatch{Schema: sc})
		}
		return out
	}
	words := strings.FieldsFunc(keyword, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := TypeSearch{Method: SearchKeyword}
	for _, sc := range all {
		if score := keywordScore(sc, keyword, words); score > 0 {
			out.Matches = append(out.Matches, TypeMatch{Schema: sc, Score: float64(score) / 10, MatchType: MatchKeyword})
		}
	}
	slices.SortStableFunc(out.Matches, func(a, b TypeMatch) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Schema.EntityType, b.Schema.EntityType))
	})
	return out
}

// BestKeywordScore returns the best score in a search, on the 0..10 scale.
func (t TypeSearch) BestKeywordScore() int {
	if len(t.Matches) == 0 || t.Method != SearchKeyword {
		return 0
	}
	return int(t.Matches[0].Score*10 + 0.5)
}

func keywordScore(sc *schema.Schema, keyword string, words []string) int {
	name := strings.ToLower(sc.EntityType)
	if name == keyword {
		return 10
	}
	best := 0
	if strings.Contains(name, keyword) || strings.Contains(keyword, name) {
		best = 6
	}
	if _, ok := sc.Fields[keyword]; ok {
		best = max(best, 5)
	}
	desc := strings.Fields(strings.ToLower(sc.Description))
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		if strings.Contains(name, w) {
			best = max(best, 6)
		}
		for field := range sc.Fields {
			switch {
			case field == w:
				best = max(best, 4)
			case strings.Contains(field, w):
				best = max(best, 3)
			}
		}
		for _, d := range desc {
			if strings.Trim(d, ".,;:()") == w {
				best = max(best, 1)
			}
		}
	}
	return best
}
