package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// EnqueueOutbox implements graph.DriverTx: one multi-row upsert per chunk.
func (t *tx) EnqueueOutbox(ctx context.Context, userID string, entityIDs []string, at time.Time) error {
	const cols = 3
	return chunks(len(entityIDs), rowChunk(cols), func(start, end int) error {
		args := make([]any, 0, (end-start)*cols)
		for _, id := range entityIDs[start:end] {
			args = append(args, userID, id, micros(at))
		}
		// Each row is ($user, $id, $at); seq starts at 1.
		values := strings.ReplaceAll(valueRows(end-start, cols), ")", ", 1)")
		if _, err := t.exec(ctx, `INSERT INTO graph_outbox (user_id, entity_id, enqueued_at, seq)
			VALUES `+values+`
			ON CONFLICT (user_id, entity_id) DO UPDATE SET seq = graph_outbox.seq + 1`, args...); err != nil {
			return fmt.Errorf("graph/embedded: enqueue outbox: %w", err)
		}
		return nil
	})
}

// ClaimOutbox implements graph.Driver. Write transactions are serialised
// (BEGIN IMMEDIATE, in this process and others), so a select then update in
// one of them cannot hand an entry to two claimers.
//
// An idle poll finds nothing on the read handle first, without taking the
// write lock.
func (d *Driver) ClaimOutbox(ctx context.Context, c graph.OutboxClaim) ([]graph.OutboxEntry, error) {
	var one int
	err := d.db.Read.QueryRowContext(ctx, `SELECT 1 FROM graph_outbox WHERE claimed_until IS NULL OR claimed_until <= $1 LIMIT 1`,
		micros(c.Now)).Scan(&one)
	if noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("graph/embedded: claim outbox: %w", err)
	}
	var out []graph.OutboxEntry
	err = d.write(ctx, func(sqlTx *sql.Tx) error {
		out = out[:0]
		rows, err := sqlTx.QueryContext(ctx, `SELECT user_id, entity_id, seq, enqueued_at FROM graph_outbox
			WHERE claimed_until IS NULL OR claimed_until <= $1
			ORDER BY enqueued_at, user_id, entity_id LIMIT $2`, micros(c.Now), c.Limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e graph.OutboxEntry
			var at int64
			if err := rows.Scan(&e.UserID, &e.EntityID, &e.Seq, &at); err != nil {
				return err
			}
			e.EnqueuedAt = fromMicros(at)
			out = append(out, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		until := micros(c.Now.Add(c.Lease))
		for _, e := range out {
			if _, err := sqlTx.ExecContext(ctx, `UPDATE graph_outbox SET claimed_until = $1 WHERE user_id = $2 AND entity_id = $3`,
				until, e.UserID, e.EntityID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("graph/embedded: claim outbox: %w", err)
	}
	return out, nil
}

// AckOutbox implements graph.Driver.
func (d *Driver) AckOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	err := d.write(ctx, func(sqlTx *sql.Tx) error {
		for _, e := range entries {
			res, err := sqlTx.ExecContext(ctx, `DELETE FROM graph_outbox WHERE user_id = $1 AND entity_id = $2 AND seq = $3`,
				e.UserID, e.EntityID, e.Seq)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 1 {
				continue
			}
			if _, err := sqlTx.ExecContext(ctx, `UPDATE graph_outbox SET claimed_until = NULL WHERE user_id = $1 AND entity_id = $2`,
				e.UserID, e.EntityID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("graph/embedded: ack outbox: %w", err)
	}
	return nil
}

// ReleaseOutbox implements graph.Driver.
func (d *Driver) ReleaseOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	err := d.write(ctx, func(sqlTx *sql.Tx) error {
		for _, e := range entries {
			if _, err := sqlTx.ExecContext(ctx, `UPDATE graph_outbox SET claimed_until = NULL WHERE user_id = $1 AND entity_id = $2`,
				e.UserID, e.EntityID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("graph/embedded: release outbox: %w", err)
	}
	return nil
}

// write runs fn in a write transaction of its own, queued like Update.
func (d *Driver) write(ctx context.Context, fn func(*sql.Tx) error) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	sqlTx, err := d.db.Write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(sqlTx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// OutboxStats implements graph.OutboxStatter, on the read handle.
func (d *Driver) OutboxStats(ctx context.Context) (graph.OutboxStats, error) {
	var n int
	var oldest sql.NullInt64
	if err := d.db.Read.QueryRowContext(ctx, `SELECT count(*), min(enqueued_at) FROM graph_outbox`).Scan(&n, &oldest); err != nil {
		return graph.OutboxStats{}, fmt.Errorf("graph/embedded: outbox stats: %w", err)
	}
	s := graph.OutboxStats{Depth: n}
	if oldest.Valid {
		s.Oldest = fromMicros(oldest.Int64)
	}
	return s, nil
}
