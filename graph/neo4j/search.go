package neo4j

import (
	"context"
	"strings"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var entitySearch = cypher.Must("entity_search")

// nameBoost weighs a term found in an entity's name above one found only
// in its snapshot text, as graph.EntitySearcher asks.
const nameBoost = "10"

// SearchEntities implements graph.EntitySearcher with the full-text index
// entity_search (migrations/neo4j/004), which holds each entity's words as
// graph.SearchText cuts them, tokenized on spaces: a term matches exactly
// the words graph.MatchEntity matches.
func (t *tx) SearchEntities(ctx context.Context, q graph.EntitySearch) ([]graph.EntityHit, int, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, 0, err
	}
	if len(q.Terms) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.EntityHit{}, 0, nil
	}
	rows, err := t.run(ctx, entitySearch, cypher.Fill{}, map[string]any{
		"query": luceneQuery(q.Terms), "userId": q.UserID, "types": nullList(q.Types),
		"includeMerged": q.IncludeMerged, "offset": int64(max(q.Page.Offset, 0)), "limit": int64(limitOr(q.Page, 100)),
	})
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, func(m map[string]any) (graph.EntityHit, error) {
		r := record{m: m}
		h := graph.EntityHit{ID: r.str("id"), Score: r.float("score")}
		return h, r.err
	})
}

// luceneQuery requires every term in the name (boosted) or the text, the
// last one also as the beginning of a word:
//
//	+(search_name:acme^10 search_text:acme) +(search_name:0042* search_text:0042*)
//
// graph.SearchTerms makes terms of letters, digits and marks only, in
// lower case, so none holds a character Lucene's syntax reads (they are
// escaped all the same) nor an operator (AND, OR and NOT are upper case).
func luceneQuery(terms []string) string {
	var b strings.Builder
	for i, term := range terms {
		t := luceneEscape(term)
		if i == len(terms)-1 {
			t += "*"
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("+(search_name:" + t + "^" + nameBoost + " search_text:" + t + ")")
	}
	return b.String()
}

// luceneEscape backslash-escapes the characters of Lucene's query syntax.
func luceneEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`+-&|!(){}[]^"~*?:\/ `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
