package embedded

import (
	"context"
	"database/sql"

	"github.com/cairnkg/cairn/graph"
)

// ScreenEntityText implements graph.TextScreener. The rows' text is
// screened here, by graph.WordScreen, from the bytes SQLite holds: its
// lower() and instr() took four times as long.
func (t *tx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	screen := graph.NewWordScreen(words)
	var out []string
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		// "+user_id": each id through the primary key (see Entities).
		rows, err := t.query(ctx, `SELECT id, entity_type, canonical_name, snapshot FROM entities
			WHERE +user_id = ? AND id IN (`+qmarks(len(chunk))+`)`, append([]any{userID}, anySlice(chunk)...)...)
		if err != nil {
			return nil, wrap("screen entity text", err)
		}
		var id string
		var typ, name, snap sql.RawBytes
		err = eachRow(rows, func(r *sql.Rows) error {
			if err := r.Scan(&id, &typ, &name, &snap); err != nil {
				return err
			}
			if screen.Keep(typ, name, snap) {
				out = append(out, id)
			}
			return nil
		})
		if err != nil {
			return nil, wrap("screen entity text", err)
		}
	}
	return out, nil
}
