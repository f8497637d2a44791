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
	// writeStmts and readStmts keep the statements prepared on each pool
	// (see stmtCache).
	writeStmts, readStmts *stmtCache
}

var _ graph.Driver = (*Driver)(nil)

// New returns a driver on db. The caller keeps ownership of db.
func New(db *sqlite.DB) *Driver {
	return &Driver{db: db, writeStmts: newStmtCache(db.Write), readStmts: newStmtCache(db.Read)}
}

// Update implements graph.Driver.
func (d *Driver) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	return runTx(ctx, d.db.Write, d.writeStmts, fn)
}

// View implements graph.Driver.
func (d *Driver) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return runTx(ctx, d.db.Read, d.readStmts, fn)
}

// Close implements graph.Driver: it closes the prepared statements. The
// store itself belongs to the caller.
func (d *Driver) Close() error {
	werr := d.writeStmts.close()
	if err := d.readStmts.close(); err != nil {
		return fmt.Errorf("graph/embedded: close: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("graph/embedded: close: %w", werr)
	}
	return nil
}

// runTx runs fn in a transaction on db, first preparing the statements that
// the cache missed (outside the transaction, see stmtCache).
func runTx(ctx context.Context, db *sql.DB, cache *stmtCache, fn func(graph.DriverTx) error) error {
	cache.preparePending(ctx)
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("graph/embedded: begin: %w", err)
	}
	if err := fn(&tx{tx: sqlTx, cache: cache}); err != nil {
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
	// cache holds the statements prepared on the pool, and stmts the ones
	// bound to this transaction, by text (see tx.stmt).
	cache *stmtCache
	stmts map[string]*sql.Stmt
}

func (t *tx) LockUser(context.Context, string) error {
	// Write transactions already hold SQLite's single write lock.
	return nil
}
