package embedded

import (
	"context"
	"database/sql"
	"strings"
)

// entityText is what ScreenEntityText looks for words in. SQLite's lower()
// folds ASCII only, which is all the screen needs: a row with any other
// byte (its text is longer in bytes than in characters) is kept whatever
// its words.
const entityText = `lower(entity_type || ' ' || canonical_name || ' ' || snapshot)`

// ScreenEntityText implements graph.TextScreener.
func (t *tx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	conds := make([]string, 0, len(words)+1)
	for range words {
		conds = append(conds, `instr(`+entityText+`, ?) > 0`)
	}
	conds = append(conds, `length(CAST(entity_type || canonical_name || snapshot AS BLOB)) != length(entity_type || canonical_name || snapshot)`)
	var out []string
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		// "+user_id": each id through the primary key (see Entities).
		rows, err := t.query(ctx, `SELECT id FROM entities WHERE +user_id = ? AND id IN (`+qmarks(len(chunk))+`)
			AND (`+strings.Join(conds, " OR ")+`)`, append(append([]any{userID}, anySlice(chunk)...), anySlice(words)...)...)
		if err != nil {
			return nil, wrap("screen entity text", err)
		}
		err = eachRow(rows, func(r *sql.Rows) error {
			var id string
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
		if err != nil {
			return nil, wrap("screen entity text", err)
		}
	}
	return out, nil
}
