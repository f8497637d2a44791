package embedded

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

var _ graph.EntityCompleter = (*tx)(nil)

// entities.name_keys holds graph.NameKeysJSON (migration 031), from which
// triggers keep entity_keys current.

// CompleteEntities implements graph.EntityCompleter with entity_keys
// (migration 031): for each type, a range of its primary key, cut at the
// limit, the ranges merged by the outer ORDER BY. Without a list of types,
// those the user has (EntityTypes: an index skip) are the ranges.
func (t *tx) CompleteEntities(ctx context.Context, q graph.EntityCompletion) ([]graph.EntityCompletionHit, error) {
	types := q.Types
	if types == nil {
		var err error
		if types, err = t.EntityTypes(ctx, q.UserID); err != nil {
			return nil, err
		}
	}
	out := []graph.EntityCompletionHit{}
	if len(types) == 0 || q.Prefix == "" {
		return out, nil
	}
	kinds := "kind IN (0, 1)"
	if q.IDs {
		kinds = "kind = 2"
	}
	// The end of the range: every key that begins with the prefix sorts
	// before it followed by the highest byte, which no UTF-8 text holds.
	// SQLite takes at most 500 terms of a compound SELECT: a user of more
	// types is answered 200 at a time.
	var keys []graph.EntityCompletionHit
	for i := 0; i < len(types); i += 200 {
		args := []any{q.UserID, q.Prefix, q.Prefix + "\xff", q.Limit}
		var parts []string
		for _, typ := range types[i:min(i+200, len(types))] {
			args = append(args, typ)
			parts = append(parts, `SELECT * FROM (SELECT entity_id, kind, key FROM entity_keys
				WHERE user_id = $1 AND entity_type = $`+strconv.Itoa(len(args))+` AND `+kinds+` AND key >= $2 AND key < $3
				ORDER BY kind, key, entity_id LIMIT $4)`)
		}
		rows, err := t.query(ctx, strings.Join(parts, " UNION ALL ")+` ORDER BY kind, key, entity_id LIMIT $4`, args...)
		if err != nil {
			return nil, wrap("complete entities", err)
		}
		err = eachRow(rows, func(r *sql.Rows) error {
			var h graph.EntityCompletionHit
			err := r.Scan(&h.ID, &h.Kind, &h.Key)
			keys = append(keys, h)
			return err
		})
		if err != nil {
			return nil, wrap("complete entities", err)
		}
	}
	return graph.FirstCompletions(keys, q.Limit), nil
}
