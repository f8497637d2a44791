package embedded

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

var _ graph.EntitySearcher = (*tx)(nil)

// Weights of bm25 by column of entity_search (migration 009): a term in the
// canonical name counts ten times one in the snapshot's text.
const searchWeights = `10.0, 1.0`

// SearchEntities implements graph.EntitySearcher with the FTS5 index of
// migration 009, which triggers on entities keep current. The score is
// bm25's, negated so that higher is better.
func (t *tx) SearchEntities(ctx context.Context, q graph.EntitySearch) ([]graph.EntityHit, int, error) {
	if len(q.Terms) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.EntityHit{}, 0, nil
	}
	where := []string{"d.user_id = $2"}
	args := []any{ftsQuery(q.Terms), q.UserID}
	if !q.IncludeMerged {
		where = append(where, "d.merged = 0")
	}
	if q.Types != nil {
		where = append(where, "d.entity_type IN ("+placeholders(len(args)+1, len(q.Types))+")")
		args = append(args, anySlice(q.Types)...)
	}
	// bm25 can be computed only in a query of the index alone, so the
	// matches are materialised first, then joined with their filters.
	from := ` FROM m JOIN entity_search_docs d ON d.doc = m.doc WHERE ` + strings.Join(where, " AND ")
	const matches = `WITH m AS MATERIALIZED (SELECT rowid AS doc, -bm25(entity_search, ` + searchWeights + `) AS score
		FROM entity_search WHERE entity_search MATCH $1) `
	n := len(args)
	args = append(args, limitOr(q.Page, 100), q.Page.Offset)
	// The window counts every match before LIMIT applies, so that one
	// query gives the page and the total.
	rows, err := t.query(ctx, matches+`SELECT d.entity_id, m.score, count(*) OVER ()`+from+`
		ORDER BY m.score DESC, d.entity_id LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), args...)
	if err != nil {
		return nil, 0, wrap("search entities", err)
	}
	out := []graph.EntityHit{}
	total := 0
	err = eachRow(rows, func(r *sql.Rows) error {
		var h graph.EntityHit
		err := r.Scan(&h.ID, &h.Score, &total)
		out = append(out, h)
		return err
	})
	if err != nil {
		return nil, 0, wrap("search entities", err)
	}
	if len(out) == 0 && q.Page.Offset > 0 {
		// A page past the end has no row to carry the total.
		if err := t.queryRow(ctx, matches+`SELECT count(*)`+from, args[:n]...).Scan(&total); err != nil {
			return nil, 0, wrap("count entity matches", err)
		}
	}
	return out, total, nil
}

// ftsQuery is the FTS5 query of terms: every term as a quoted string
// (terms hold only letters, digits and marks, which need no escaping), the
// last one a prefix; FTS5 joins them with AND.
func ftsQuery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteByte('*')
	return b.String()
}
