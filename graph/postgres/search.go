package postgres

import (
	"context"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

var _ graph.EntitySearcher = (*tx)(nil)

// searchWeights are ts_rank's weights of the labels D, C, B and A: the
// canonical name is A, the snapshot's text B (migration 009), so that a
// term in the name counts ten times one in the snapshot.
const searchWeights = `'{0, 0, 0.1, 1.0}'`

// SearchEntities implements graph.EntitySearcher with the tsvector column
// entities.search and its GIN index (migration 009), which PostgreSQL
// computes on every write of an entity. The score is ts_rank's.
func (t *tx) SearchEntities(ctx context.Context, q graph.EntitySearch) ([]graph.EntityHit, int, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, 0, err
	}
	if len(q.Terms) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.EntityHit{}, 0, nil
	}
	a := args{}
	tsq := a.add(tsQuery(q.Terms))
	where := []string{"user_id = " + a.add(q.UserID), "search @@ " + tsq + "::tsquery"}
	if !q.IncludeMerged {
		where = append(where, "merged_into IS NULL")
	}
	if q.Types != nil {
		where = append(where, "entity_type = ANY("+a.add(q.Types)+")")
	}
	from := ` FROM entities WHERE ` + strings.Join(where, " AND ")
	n := len(a)
	page := ` LIMIT ` + a.add(limitOr(q.Page, 100)) + ` OFFSET ` + a.add(q.Page.Offset)
	// The window counts every match before LIMIT applies, so that one
	// query gives the page and the total.
	total := 0
	out, err := query(ctx, t, func(r rowScanner) (graph.EntityHit, error) {
		var h graph.EntityHit
		err := r.Scan(&h.ID, &h.Score, &total)
		return h, err
	}, `SELECT id, ts_rank(`+searchWeights+`, search, `+tsq+`::tsquery)::float8 AS score, count(*) OVER ()`+from+`
		ORDER BY score DESC, id`+page, a...)
	if err != nil {
		return nil, 0, wrap("search entities", err)
	}
	if len(out) == 0 && q.Page.Offset > 0 {
		// A page past the end has no row to carry the total.
		err := t.tx.QueryRow(ctx, `SELECT count(*)`+from, a[:n]...).Scan(&total)
		if err != nil && !noRows(err) {
			return nil, 0, wrap("count entity matches", err)
		}
	}
	return out, total, nil
}

// tsQuery is the tsquery of terms: every term as a quoted lexeme (terms
// are lower-cased runs of letters, digits and marks, as the tsvector's
// lexemes are, so they are taken as they are rather than parsed again),
// joined with AND, the last one a prefix.
func tsQuery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('\'')
		b.WriteString(strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(t))
		b.WriteByte('\'')
	}
	b.WriteString(":*")
	return b.String()
}
