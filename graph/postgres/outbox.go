package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/graph"
)

// EnqueueOutbox implements graph.DriverTx. The row is locked until the
// transaction ends, so claimers skip it until then (and see it after).
func (t *tx) EnqueueOutbox(ctx context.Context, userID string, entityIDs []string, at time.Time) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if len(entityIDs) == 0 {
		return nil
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO graph_outbox (user_id, entity_id, seq, enqueued_at)
		SELECT $1, id, 1, $3 FROM unnest($2::text[]) AS id
		ON CONFLICT (user_id, entity_id) DO UPDATE SET seq = graph_outbox.seq + 1`,
		userID, entityIDs, at)
	return wrap("enqueue outbox", err)
}

// ClaimOutbox implements graph.Driver. FOR UPDATE SKIP LOCKED makes
// concurrent claimers, in any process, take disjoint batches without
// waiting for each other; a row that a graph transaction is enqueueing is
// skipped until it commits.
func (d *Driver) ClaimOutbox(ctx context.Context, c graph.OutboxClaim) ([]graph.OutboxEntry, error) {
	rows, err := d.pool.Query(ctx, `UPDATE graph_outbox o SET claimed_until = $2
		FROM (SELECT user_id, entity_id FROM graph_outbox
			WHERE claimed_until IS NULL OR claimed_until <= $1
			ORDER BY enqueued_at, user_id, entity_id LIMIT $3
			FOR UPDATE SKIP LOCKED) c
		WHERE o.user_id = c.user_id AND o.entity_id = c.entity_id
		RETURNING o.user_id, o.entity_id, o.seq, o.enqueued_at`,
		c.Now, c.Now.Add(c.Lease), c.Limit)
	if err != nil {
		return nil, fmt.Errorf("graph/postgres: claim outbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (graph.OutboxEntry, error) {
		var e graph.OutboxEntry
		err := row.Scan(&e.UserID, &e.EntityID, &e.Seq, &e.EnqueuedAt)
		e.EnqueuedAt = e.EnqueuedAt.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("graph/postgres: claim outbox: %w", err)
	}
	// RETURNING does not keep the subquery's order.
	sortOutbox(out)
	return out, nil
}

// AckOutbox implements graph.Driver, in one transaction of two statements.
func (d *Driver) AckOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	users := make([]string, len(entries))
	ids := make([]string, len(entries))
	seqs := make([]int64, len(entries))
	for i, e := range entries {
		users[i], ids[i], seqs[i] = e.UserID, e.EntityID, e.Seq
	}
	err := retry(ctx, func() error {
		return pgx.BeginFunc(ctx, d.pool, func(pgTx pgx.Tx) error {
			if _, err := pgTx.Exec(ctx, `DELETE FROM graph_outbox o USING unnest($1::text[], $2::text[], $3::bigint[]) AS a(user_id, entity_id, seq)
			WHERE o.user_id = a.user_id AND o.entity_id = a.entity_id AND o.seq = a.seq`, users, ids, seqs); err != nil {
				return err
			}
			_, err := pgTx.Exec(ctx, `UPDATE graph_outbox o SET claimed_until = NULL
			FROM unnest($1::text[], $2::text[]) AS a(user_id, entity_id)
			WHERE o.user_id = a.user_id AND o.entity_id = a.entity_id`, users, ids)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("graph/postgres: ack outbox: %w", err)
	}
	return nil
}

// ReleaseOutbox implements graph.Driver.
func (d *Driver) ReleaseOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	users := make([]string, len(entries))
	ids := make([]string, len(entries))
	for i, e := range entries {
		users[i], ids[i] = e.UserID, e.EntityID
	}
	err := retry(ctx, func() error {
		_, err := d.pool.Exec(ctx, `UPDATE graph_outbox o SET claimed_until = NULL
			FROM unnest($1::text[], $2::text[]) AS a(user_id, entity_id)
			WHERE o.user_id = a.user_id AND o.entity_id = a.entity_id`, users, ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("graph/postgres: release outbox: %w", err)
	}
	return nil
}

// retry runs fn again when it loses a deadlock or a serialization failure:
// an acknowledgement or release touches several rows that a graph
// transaction may be enqueueing in another order.
func retry(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// sortOutbox puts claimed entries in the order they were chosen in.
func sortOutbox(es []graph.OutboxEntry) {
	slices.SortFunc(es, func(a, b graph.OutboxEntry) int {
		return cmp.Or(a.EnqueuedAt.Compare(b.EnqueuedAt), strings.Compare(a.UserID, b.UserID), strings.Compare(a.EntityID, b.EntityID))
	})
}

// OutboxStats implements graph.OutboxStatter.
func (d *Driver) OutboxStats(ctx context.Context) (graph.OutboxStats, error) {
	var s graph.OutboxStats
	var oldest *time.Time
	if err := d.pool.QueryRow(ctx, `SELECT count(*), min(enqueued_at) FROM graph_outbox`).Scan(&s.Depth, &oldest); err != nil {
		return graph.OutboxStats{}, fmt.Errorf("graph/postgres: outbox stats: %w", err)
	}
	if oldest != nil {
		s.Oldest = oldest.UTC()
	}
	return s, nil
}
