// Package embedded is the graph driver of Cairn's embedded store: the graph
// lives in the same SQLite file as everything else (see db/sqlite), so that
// `cairn serve` needs nothing installed.
//
// Transactions map one to one: Update is a BEGIN IMMEDIATE transaction on the
// write handle, so writers are serialised (which also makes LockUser a no-op
// and every cycle check atomic), and View is a deferred transaction on the
// read handle, which WAL lets run beside a writer.
package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
)

// Driver implements graph.Driver on an open embedded store.
type Driver struct {
	db *sqlite.DB
	// writeMu queues this process's writers in Go rather than in SQLite's
	// busy handler, which polls; other processes still wait in SQLite.
	writeMu sync.Mutex
}

var _ graph.Driver = (*Driver)(nil)

// New returns a driver on db. The caller keeps ownership of db.
func New(db *sqlite.DB) *Driver {
	return &Driver{db: db}
}

// Update implements graph.Driver.
func (d *Driver) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	return runTx(ctx, d.db.Write, fn)
}

// View implements graph.Driver.
func (d *Driver) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return runTx(ctx, d.db.Read, fn)
}

// Close implements graph.Driver. The store belongs to the caller, and
// with it the statements its connections keep compiled.
func (d *Driver) Close() error { return nil }

// runTx runs fn in a transaction on db.
func runTx(ctx context.Context, db *sql.DB, fn func(graph.DriverTx) error) error {
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("graph/embedded: begin: %w", err)
	}
	if err := fn(&tx{tx: sqlTx}); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		if errors.Is(err, sql.ErrTxDone) && ctx.Err() != nil {
			// database/sql rolled the transaction back when ctx ended:
			// say that, rather than "already committed or rolled back".
			err = context.Cause(ctx)
		}
		return fmt.Errorf("graph/embedded: commit: %w", err)
	}
	return nil
}

// tx implements graph.DriverTx on one SQLite transaction.
type tx struct {
	tx *sql.Tx
}

// exec, query and queryRow run a statement in the transaction. The store's
// connections keep the statements they ran compiled (db/sqlite's statement
// cache), so running a text again skips SQLite's parser: parsing was about
// half the CPU of a batch of relationship writes. query's rows must be
// closed before the same text runs again for the cache to reuse it.
func (t *tx) exec(ctx context.Context, text string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, text, args...)
}

func (t *tx) query(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, text, args...)
}

func (t *tx) queryRow(ctx context.Context, text string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, text, args...)
}

func (t *tx) LockUser(context.Context, string) error {
	// Write transactions already hold SQLite's single write lock.
	return nil
}
