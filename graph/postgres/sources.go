package postgres

import (
	"context"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// ListSources implements graph.DriverTx: one count and one page over the
// user's sources, a source's entity types tested through
// observations_source.
func (t *tx) ListSources(ctx context.Context, f graph.SourceFilter) ([]graph.Source, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	a := args{}
	where := []string{"s.user_id = " + a.add(f.UserID)}
	if f.Kind != "" {
		where = append(where, "s.kind = "+a.add(f.Kind))
	}
	if f.EntityTypes != nil {
		where = append(where, "(s.kind = "+a.add(graph.SourceFile)+` OR EXISTS (SELECT 1 FROM observations o
			WHERE o.user_id = $1 AND o.source_id = s.id AND o.entity_type = ANY(`+a.add(f.EntityTypes)+")))")
	}
	if len(f.ExcludeIDs) > 0 {
		where = append(where, "NOT (s.id = ANY("+a.add(f.ExcludeIDs)+"))")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM sources s WHERE `+cond, a...).Scan(&total); err != nil {
		return nil, 0, wrap("count sources", err)
	}
	page := `LIMIT ` + a.add(limitOr(f.Page, 100)) + ` OFFSET ` + a.add(f.Page.Offset)
	out, err := query(ctx, t, scanSource, `SELECT `+sourceColumns+` FROM sources s WHERE `+cond+`
		ORDER BY s.created_at DESC, s.id ASC `+page, a...)
	return out, total, wrap("list sources", err)
}
