package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
)

var (
	_ graph.ChangeLog   = (*Driver)(nil)
	_ graph.ChangeLogTx = (*tx)(nil)
)

// AppendChanges implements graph.ChangeLogTx. Writers are serialised (in
// this process and others), so seq follows commit order.
func (t *tx) AppendChanges(ctx context.Context, changes []graph.Change, at time.Time) error {
	const cols = 7
	return chunks(len(changes), rowChunk(cols), func(start, end int) error {
		args := make([]any, 0, (end-start)*cols)
		for _, c := range changes[start:end] {
			args = append(args, c.UserID, c.EntityID, c.EntityType, string(c.Kind), c.RelatedID, c.Period, micros(at))
		}
		if _, err := t.exec(ctx, `INSERT INTO graph_changes (user_id, entity_id, entity_type, kind, related_id, period, changed_at)
			VALUES `+valueRows(end-start, cols), args...); err != nil {
			return fmt.Errorf("graph/embedded: append changes: %w", err)
		}
		return nil
	})
}

// Changes implements graph.ChangeLog.
func (d *Driver) Changes(ctx context.Context, after int64, limit int) ([]graph.Change, error) {
	rows, err := d.db.Read.QueryContext(ctx, `SELECT seq, user_id, entity_id, entity_type, kind, related_id, period, changed_at
		FROM graph_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("graph/embedded: changes: %w", err)
	}
	defer rows.Close()
	var out []graph.Change
	for rows.Next() {
		var c graph.Change
		var at int64
		if err := rows.Scan(&c.Seq, &c.UserID, &c.EntityID, &c.EntityType, &c.Kind, &c.RelatedID, &c.Period, &at); err != nil {
			return nil, fmt.Errorf("graph/embedded: changes: %w", err)
		}
		c.At = fromMicros(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("graph/embedded: changes: %w", err)
	}
	return out, nil
}

// LastChange implements graph.ChangeLog.
func (d *Driver) LastChange(ctx context.Context) (int64, error) {
	var n int64
	if err := d.db.Read.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM graph_changes`).Scan(&n); err != nil {
		return 0, fmt.Errorf("graph/embedded: last change: %w", err)
	}
	return n, nil
}

// PruneChanges implements graph.ChangeLog. An idle prune finds nothing on
// the read handle first, without taking the write lock.
func (d *Driver) PruneChanges(ctx context.Context, before time.Time) error {
	var one int
	err := d.db.Read.QueryRowContext(ctx, `SELECT 1 FROM graph_changes WHERE changed_at < $1 LIMIT 1`, micros(before)).Scan(&one)
	if noRows(err) {
		return nil
	}
	if err == nil {
		err = d.write(ctx, func(sqlTx *sql.Tx) error {
			_, err := sqlTx.ExecContext(ctx, `DELETE FROM graph_changes WHERE changed_at < $1`, micros(before))
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("graph/embedded: prune changes: %w", err)
	}
	return nil
}
