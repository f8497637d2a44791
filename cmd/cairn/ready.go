package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "modernc.org/sqlite/lib"
)

// errNotWritable is the error a store that answers but refuses writes gives,
// at start and from /readyz.
var errNotWritable = errors.New("the store cannot be written")

// probeWrite is the cheapest real write: it rewrites the one row of
// cairn_write_probe (migration 008). A ping or a read passes on a store
// that refuses every write (a read-only file, a full disk, a PostgreSQL
// standby or a read-only transaction default), so only a write tells.
const probeWrite = `INSERT INTO cairn_write_probe (id, probes) VALUES (1, 1)
ON CONFLICT (id) DO UPDATE SET probes = cairn_write_probe.probes + 1`

// writable reports whether the backend takes writes, by making one. A store
// that refuses it gives an error wrapping errNotWritable.
func (b *backend) writable(ctx context.Context) error {
	if _, err := b.control.ExecContext(ctx, probeWrite); err != nil {
		return b.notWritable(err)
	}
	return nil
}

// notWritable names the store in a write error, and says errNotWritable
// when the cause is one that writing again will not cure by itself.
func (b *backend) notWritable(err error) error {
	if refusesWrites(err) {
		return fmt.Errorf("%w: %s: %s", errNotWritable, b.describe, writeCause(err))
	}
	return fmt.Errorf("write to %s: %w", b.describe, err)
}

// refusesWrites reports whether err says the database will not take writes:
// SQLite's READONLY, FULL and CANTOPEN (the journal or WAL cannot be
// created), the I/O errors of writing, syncing and growing its files (the
// shared-memory index of a WAL store fails to grow, not FULL, on a full
// disk), or PostgreSQL's read_only_sql_transaction and disk_full.
func refusesWrites(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "25006" || pgErr.Code == "53100"
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() {
	case sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_IOERR_FSYNC, sqlite3.SQLITE_IOERR_TRUNCATE,
		sqlite3.SQLITE_IOERR_SHMOPEN, sqlite3.SQLITE_IOERR_SHMSIZE:
		return true
	}
	switch coded.Code() & 0xff {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// writeCause is the database's own words for a refused write, without the
// wrapping of every layer it passed through.
func writeCause(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	return err.Error()
}

// ready reports whether the service can take traffic (/readyz): the stores
// answer and take writes.
func (a *app) ready(ctx context.Context) error {
	if err := a.backend.ping(ctx); err != nil {
		return err
	}
	return a.backend.writable(ctx)
}
