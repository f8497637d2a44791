package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/graph"
)

var (
	_ graph.ChangeLog   = (*Driver)(nil)
	_ graph.ChangeLogTx = (*tx)(nil)
)

// changeLockClass is the first key of the advisory lock that writers of the
// change log hold from their append to their commit ("chng"), so that seq
// follows commit order (a BIGSERIAL alone would hand a reader seq 8
// committed before seq 7, and its cursor would pass 7 for good). The lock
// is taken last in a transaction, after the users' locks, and held only
// for the append and the commit.
const changeLockClass int32 = 0x63686e67

// AppendChanges implements graph.ChangeLogTx.
func (t *tx) AppendChanges(ctx context.Context, changes []graph.Change, at time.Time) error {
	if len(changes) == 0 {
		return nil
	}
	if err := t.enter(ctx, changes[0].UserID); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, changeLockClass); err != nil {
		return wrap("lock change log", err)
	}
	cols := make([][]string, 6)
	for _, c := range changes {
		for i, v := range []string{c.UserID, c.EntityID, c.EntityType, string(c.Kind), c.RelatedID, c.Period} {
			cols[i] = append(cols[i], v)
		}
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO graph_changes (user_id, entity_id, entity_type, kind, related_id, period, changed_at)
		SELECT u, e, ty, k, r, p, $7 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS c(u, e, ty, k, r, p)`,
		cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], at)
	return wrap("append changes", err)
}

// Changes implements graph.ChangeLog.
func (d *Driver) Changes(ctx context.Context, after int64, limit int) ([]graph.Change, error) {
	rows, err := d.pool.Query(ctx, `SELECT seq, user_id, entity_id, entity_type, kind, related_id, period, changed_at
		FROM graph_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, wrap("changes", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (graph.Change, error) {
		var c graph.Change
		err := row.Scan(&c.Seq, &c.UserID, &c.EntityID, &c.EntityType, &c.Kind, &c.RelatedID, &c.Period, &c.At)
		c.At = c.At.UTC()
		return c, err
	})
	return out, wrap("changes", err)
}

// LastChange implements graph.ChangeLog.
func (d *Driver) LastChange(ctx context.Context) (int64, error) {
	var n int64
	err := d.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM graph_changes`).Scan(&n)
	return n, wrap("last change", err)
}

// PruneChanges implements graph.ChangeLog.
func (d *Driver) PruneChanges(ctx context.Context, before time.Time) error {
	_, err := d.pool.Exec(ctx, `DELETE FROM graph_changes WHERE changed_at < $1`, before)
	return wrap("prune changes", err)
}
