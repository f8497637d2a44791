// Package postgres is a graph driver on PostgreSQL, so that a deployment can
// keep its graph in the same database as its control plane and memories and
// run on PostgreSQL alone. Its tables are created by
// migrations/postgres/002_graph.sql; db/postgres opens the pool and applies
// them.
//
// Transactions. Update runs at READ COMMITTED and, at the transaction's first
// call for a user, takes a transaction-scoped advisory lock on a hash of that
// user's id (pg_advisory_xact_lock). One user's write transactions therefore
// run one at a time, as every write transaction does on the embedded store,
// while different users write side by side. Because the lock comes before
// the transaction's first statement for the user, and every READ COMMITTED
// statement sees what committed before it began, each write transaction reads
// everything its predecessors wrote: a cycle check and the insert it guards
// are atomic with respect to concurrent writers, and a read-then-insert (a
// source looked up by hash, then stored) cannot race. A transaction that
// nevertheless loses a serialization failure or a deadlock (40001, 40P01;
// possible when one transaction locks two users) is rolled back and run
// again, which the graph.Driver contract allows.
//
// View runs at REPEATABLE READ, READ ONLY: one snapshot for the whole
// transaction, and no locks.
//
// Traversal. The transaction implements graph.Reacher with a recursive CTE,
// so that a cycle check is one round trip however long the chain it walks.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnkg/cairn/graph"
)

// Driver implements graph.Driver on a PostgreSQL pool.
type Driver struct {
	pool *pgxpool.Pool
}

var _ graph.Driver = (*Driver)(nil)

// New returns a driver on pool, whose database must be migrated (db/postgres
// does that). The caller keeps ownership of pool.
func New(pool *pgxpool.Pool) *Driver { return &Driver{pool: pool} }

// maxAttempts bounds how many times Update runs a transaction that keeps
// losing serialization failures or deadlocks.
const maxAttempts = 8

// Update implements graph.Driver.
func (d *Driver) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}
	for attempt := 1; ; attempt++ {
		err := d.run(ctx, opts, true, fn)
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		// A short pause, growing with each attempt, lets the winner finish.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// View implements graph.Driver.
func (d *Driver) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

// Close implements graph.Driver. The pool belongs to the caller.
func (d *Driver) Close() error { return nil }

func (d *Driver) run(ctx context.Context, opts pgx.TxOptions, write bool, fn func(graph.DriverTx) error) error {
	pgTx, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("graph/postgres: begin: %w", err)
	}
	t := &tx{tx: pgTx, write: write}
	if err := fn(t); err != nil {
		_ = pgTx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := pgTx.Commit(ctx); err != nil {
		return fmt.Errorf("graph/postgres: commit: %w", err)
	}
	return nil
}

// retryable reports whether err is a conflict that running the transaction
// again resolves.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// tx implements graph.DriverTx and graph.Reacher on one PostgreSQL
// transaction.
type tx struct {
	tx    pgx.Tx
	write bool
	// locked holds the users whose advisory lock this transaction holds.
	locked []string
}

var (
	_ graph.DriverTx = (*tx)(nil)
	_ graph.Reacher  = (*tx)(nil)
)

// userLockClass is the first key of the graph's per-user advisory locks
// ("grap"); the second is a hash of the user id. The two-key form keeps
// these locks apart from the single-key locks of the migration runner and
// the control plane.
const userLockClass int32 = 0x67726170

// enter takes the user's write lock at the transaction's first call for
// that user; in read-only transactions it does nothing.
func (t *tx) enter(ctx context.Context, userID string) error {
	if !t.write {
		return nil
	}
	for _, u := range t.locked {
		if u == userID {
			return nil
		}
	}
	h := fnv.New32a()
	h.Write([]byte(userID))
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, userLockClass, int32(h.Sum32())); err != nil {
		return fmt.Errorf("graph/postgres: lock user: %w", err)
	}
	t.locked = append(t.locked, userID)
	return nil
}

// LockUser implements graph.DriverTx: the lock that every write transaction
// takes at its first call for the user.
func (t *tx) LockUser(ctx context.Context, userID string) error { return t.enter(ctx, userID) }
