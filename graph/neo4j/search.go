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
// entity_search_scoped (migrations/neo4j/008), which holds each entity's
// words as graph.SearchText cuts them, tokenized on spaces (a term matches
// exactly the words graph.MatchEntity matches), and its user and type.
func (t *tx) SearchEntities(ctx context.Context, q graph.EntitySearch) ([]graph.EntityHit, int, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, 0, err
	}
	if len(q.Terms) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.EntityHit{}, 0, nil
	}
	rows, err := t.run(ctx, entitySearch, cypher.Fill{}, map[string]any{
		"query": luceneQuery(q.Terms, q.UserID, q.Types), "userId": q.UserID, "types": nullList(q.Types),
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

// maxTypeClauses is the most types luceneQuery names. Lucene refuses a
// query of more than 1,024 clauses; a search over more types than this is
// filtered by type in the statement alone.
const maxTypeClauses = 256

// luceneQuery requires every term in the name (boosted) or the text, the
// last one also as the beginning of a word, and the caller's user and,
// when the search names them, one of its types:
//
//	+(search_name:acme^10 search_text:acme) +(search_name:0042*^10 search_text:0042*)
//	+user_id:"usr_1"^0 +(entity_type:"company"^0 entity_type:"person"^0)
//
// The user and types are phrases, which the index's whitespace analyzer
// cuts as it cut the stored value, so any user id matches itself; their
// boost of 0 leaves every hit's score what the terms make it. They only
// narrow what Lucene returns: entity_search checks user and type again.
// graph.SearchTerms makes terms of letters, digits and marks only, in
// lower case, so none holds a character Lucene's syntax reads (they are
// escaped all the same) nor an operator (AND, OR and NOT are upper case).
func luceneQuery(terms []string, userID string, types []string) string {
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
	if strings.TrimSpace(userID) != "" {
		b.WriteString(" +user_id:" + lucenePhrase(userID) + "^0")
	}
	if len(types) > 0 && len(types) <= maxTypeClauses {
		b.WriteString(" +(")
		for i, typ := range types {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("entity_type:" + lucenePhrase(typ) + "^0")
		}
		b.WriteByte(')')
	}
	return b.String()
}

// lucenePhrase quotes s as a Lucene phrase, escaping the two characters a
// phrase reads: the quote and the backslash.
func lucenePhrase(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
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
