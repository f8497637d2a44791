package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// ListSources implements graph.DriverTx: one count and one page over the
// user's sources, a source's entity types tested through
// observations_source.
func (t *tx) ListSources(ctx context.Context, f graph.SourceFilter) ([]graph.Source, int, error) {
	cond, args := sourceCond(f)
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM sources s WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count sources", err)
	}
	args = append(args, limitOr(f.Page, 100), f.Page.Offset)
	rows, err := t.query(ctx, `SELECT `+sourceColumns+` FROM sources s WHERE `+cond+`
		ORDER BY s.created_at DESC, s.id ASC LIMIT $`+fmt.Sprint(len(args)-1)+` OFFSET $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, 0, wrap("list sources", err)
	}
	out := []graph.Source{}
	err = eachRow(rows, func(r *sql.Rows) error {
		s, err := scanSource(r)
		out = append(out, s)
		return err
	})
	return out, total, wrap("list sources", err)
}

// sourceCond is the WHERE clause of ListSources over sources s, and its
// arguments.
func sourceCond(f graph.SourceFilter) (string, []any) {
	where := []string{"s.user_id = $1"}
	args := []any{f.UserID}
	if f.Kind != "" {
		args = append(args, f.Kind)
		where = append(where, fmt.Sprintf("s.kind = $%d", len(args)))
	}
	if f.EntityTypes != nil {
		cond := fmt.Sprintf("s.kind = '%s'", graph.SourceFile)
		if len(f.EntityTypes) > 0 {
			cond += " OR EXISTS (SELECT 1 FROM observations o WHERE o.user_id = $1 AND o.source_id = s.id AND o.entity_type IN (" +
				placeholders(len(args)+1, len(f.EntityTypes)) + "))"
			args = append(args, anySlice(f.EntityTypes)...)
		}
		where = append(where, "("+cond+")")
	}
	if len(f.ExcludeIDs) > 0 {
		where = append(where, "s.id NOT IN ("+placeholders(len(args)+1, len(f.ExcludeIDs))+")")
		args = append(args, anySlice(f.ExcludeIDs)...)
	}
	return strings.Join(where, " AND "), args
}
