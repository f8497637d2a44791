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
// while different users write side by side. Within one process, writers of a
// busy user wait in Go, before they take a pool connection, so that they do
// not starve other users' requests of connections. Because the lock comes before
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
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnkg/cairn/graph"
)

// Driver implements graph.Driver on a PostgreSQL pool.
type Driver struct {
	pool *pgxpool.Pool
	// queues line up this process's write transactions per user (striped
	// by the hash of the user id) before they take a connection, so that
	// writers waiting for a busy user do not hold pool connections that
	// other users' requests need. The advisory lock still orders writers
	// across processes.
	queues [64]sync.Mutex
}

var _ graph.Driver = (*Driver)(nil)

// New returns a driver on pool, whose database must be migrated (db/postgres
// does that). The caller keeps ownership of pool.
func New(pool *pgxpool.Pool) *Driver { return &Driver{pool: pool} }

// maxAttempts bounds how many times Update runs a transaction that keeps
// losing serialization failures or deadlocks.
const maxAttempts = 8

// Update implements graph.Driver. The transaction begins at fn's first call,
// once the user is known (see tx.enter).
func (d *Driver) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	for attempt := 1; ; attempt++ {
		err := d.run(ctx, &tx{d: d, write: true}, fn)
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
	pgTx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("graph/postgres: begin: %w", err)
	}
	return d.run(ctx, &tx{d: d, tx: pgTx}, fn)
}

// Close implements graph.Driver. The pool belongs to the caller.
func (d *Driver) Close() error { return nil }

// run calls fn on t, then commits t's transaction, if it began, or rolls it
// back when fn fails.
func (d *Driver) run(ctx context.Context, t *tx, fn func(graph.DriverTx) error) error {
	defer t.release()
	err := fn(t)
	if t.tx == nil {
		return err
	}
	if err != nil {
		_ = t.tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := t.tx.Commit(ctx); err != nil {
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
	d *Driver
	// tx is the transaction; in a write transaction, nil until the first
	// call.
	tx    pgx.Tx
	write bool
	// locked holds the users whose advisory lock this transaction holds.
	locked []string
	// queue is the in-process queue this write transaction holds, if any.
	queue *sync.Mutex
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

// enter is called first by every method. In a write transaction, at the
// first call for a user, it takes the user's write lock: at the very first
// call, it waits in the user's in-process queue, then begins the
// transaction; then, for every new user, it takes the user's advisory lock
// until the transaction ends. Read-only transactions take no locks.
//
// A transaction waits for an in-process queue only before it holds
// anything, so queues cannot take part in a deadlock; advisory locks can,
// when two transactions each touch two users, and PostgreSQL detects those
// (40P01, which Update retries).
func (t *tx) enter(ctx context.Context, userID string) error {
	if !t.write || slices.Contains(t.locked, userID) {
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(userID))
	key := h.Sum32()
	if t.tx == nil {
		t.queue = &t.d.queues[key%uint32(len(t.d.queues))]
		t.queue.Lock()
		pgTx, err := t.d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite})
		if err != nil {
			return fmt.Errorf("graph/postgres: begin: %w", err)
		}
		t.tx = pgTx
	}
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, userLockClass, int32(key)); err != nil {
		return fmt.Errorf("graph/postgres: lock user: %w", err)
	}
	t.locked = append(t.locked, userID)
	return nil
}

// release leaves the in-process queue, once the transaction has ended.
func (t *tx) release() {
	if t.queue != nil {
		t.queue.Unlock()
		t.queue = nil
	}
}

// LockUser implements graph.DriverTx: the lock that every write transaction
// takes at its first call for the user.
func (t *tx) LockUser(ctx context.Context, userID string) error { return t.enter(ctx, userID) }
