// Package sqlite opens Cairn's embedded store: one SQLite file in the data
// directory, through the pure-Go driver modernc.org/sqlite, in WAL mode with
// foreign keys on, migrated to the newest schema.
//
// A DB holds two handles on the same file. Write runs every explicit
// transaction as BEGIN IMMEDIATE, so writers serialise on SQLite's write lock
// up front instead of failing half-way with SQLITE_BUSY; that holds across
// processes too (an admin command while `cairn serve` runs). Read is a pool of
// query-only connections whose transactions are deferred, so that consistent
// multi-statement reads (a traversal) run beside a writer, as WAL allows.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/cairnkg/cairn/migrations"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the name of the store inside the data directory.
const FileName = "cairn.db"

// DB is an open, migrated embedded store.
type DB struct {
	// Path is the file the store lives in.
	Path string
	// Write is the handle for writes and for reads that must see them.
	Write *sql.DB
	// Read is the handle for read-only transactions.
	Read *sql.DB
	// ckpt checkpoints the WAL in the background (see checkpoint.go).
	ckpt *checkpointer
	// unlock releases the store's shared lock (see lock_unix.go).
	unlock func()
}

// Open opens (creating if needed) the store in dataDir and applies pending
// migrations.
func Open(ctx context.Context, dataDir string) (*DB, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create data directory: %w", err)
	}
	return OpenFile(ctx, filepath.Join(dataDir, FileName))
}

// OpenFile opens the store at path; tests use it with a file in t.TempDir().
func OpenFile(ctx context.Context, path string) (_ *DB, err error) {
	unlock, err := lockShared(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	write, err := openWriter(dsn(path, false), make(writeQueue, 1))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	sizePool(write, writeConnsKept)
	if err := connect(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if _, err := migrations.Apply(ctx, write, migrations.SQLite); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	read, err := openCaching(dsn(path, true))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	sizePool(read, max(4, runtime.GOMAXPROCS(0)))
	ckpt, err := startCheckpointer(path)
	if err != nil {
		read.Close()
		write.Close()
		return nil, err
	}
	return &DB{Path: path, Write: write, Read: read, ckpt: ckpt, unlock: unlock}, nil
}

// writeConnsKept is how many connections the Write handle keeps open
// between uses: the usual writers at once (a call's transaction, the audit
// log, the entity-embedding worker, the job workers).
const writeConnsKept = 4

// sizePool lets db open as many connections as it has users at once, and
// keeps kept of them open between uses.
//
// Unbounded, because a caller may hold a connection while it waits for
// another of the same handle, and with a bounded pool enough such callers
// at once hold every connection and wait for each other until their
// deadlines. A writer waiting for its turn (see writequeue.go) holds a
// connection of Write while it waits, and a store reads the schema
// registry through Write inside its transaction
// (TestReadInsideAWriteWhileWritersWait); an entity search reads the
// stored entity embeddings through Read inside its graph transaction
// (TestReadsInsideReadsDoNotStarve). Sixteen clients of `cairn serve` at
// once met both as TIMEOUTs after 30 s. SQLite connections are cheap, WAL
// lets any number read at once, and writes are one at a time whatever the
// pool; how many calls run at once is the server's to bound, not the
// pool's.
//
// Kept, because database/sql keeps two idle connections by default and
// closes any other as it is released: with a call's transaction, the
// audit log's writer and the entity-embedding worker at once, the third
// connection of Write was closed after nearly every commit and opened
// again for the next, rerunning the pragmas, dropping its prepared
// statements and freeing its page cache (a madvise per chunk freed: 4 to
// 7% of the server's CPU under a bulk load).
func sizePool(db *sql.DB, kept int) {
	db.SetMaxOpenConns(0)
	db.SetMaxIdleConns(kept)
}

// Close stops the background checkpointer and closes both handles.
func (db *DB) Close() error {
	if db.ckpt != nil {
		_ = db.ckpt.stop()
	}
	rerr := db.Read.Close()
	werr := db.Write.Close()
	if db.unlock != nil {
		db.unlock()
	}
	if err := werr; err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	if rerr != nil {
		return fmt.Errorf("sqlite: close: %w", rerr)
	}
	return nil
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	// busy_timeout first: the pragmas run in order on every new
	// connection, and switching a new file to WAL needs the write lock,
	// which another process creating the store at the same moment may hold.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "cache_size(-32768)")
	q.Add("_pragma", "mmap_size(1073741824)")
	// Statement journals (a multi-row statement inside a transaction keeps
	// one, to undo just that statement) and temporary b-trees in memory:
	// in files, every bulk insert of a store or create_relationships call
	// paid a pwrite per page it changed, on top of the WAL's.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstop))
	if !readOnly {
		// Deleted and overwritten rows are zeroed rather than left in the
		// file's free space: an erasure (docs/forgetting.md) leaves no
		// bytes behind in whatever table it deletes from. It costs the
		// writes of pages a delete frees, which Cairn's writes rarely do.
		q.Add("_pragma", "secure_delete(1)")
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		q.Set("_txlock", "deferred")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Migrate applies pending migrations to the store in dataDir (creating it if
// needed) and returns the ones it applied: it is `cairn migrate`. Processes
// that run it at the same moment serialise on SQLite's write lock.
func Migrate(ctx context.Context, dataDir string) ([]migrations.Migration, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create data directory: %w", err)
	}
	path := filepath.Join(dataDir, FileName)
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	if err := connect(ctx, db); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	applied, err := migrations.Apply(ctx, db, migrations.SQLite)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return applied, nil
}

// Status reports every migration and whether the store in dataDir has it.
// It changes nothing: a store that does not exist yet is not created, and
// reports every migration as pending.
func Status(ctx context.Context, dataDir string) ([]migrations.Status, error) {
	path := filepath.Join(dataDir, FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		all, err := migrations.Load(migrations.SQLite)
		if err != nil {
			return nil, err
		}
		out := make([]migrations.Status, len(all))
		for i, m := range all {
			out[i] = migrations.Status{Migration: m}
		}
		return out, nil
	}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	status, err := migrations.List(ctx, db, migrations.SQLite)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return status, nil
}

// connectTimeout bounds how long connect waits for another process that is
// creating the same store.
const connectTimeout = 10 * time.Second

// connect opens db's first connection, which runs the pragmas. Two
// processes creating a new store at the same moment race to switch it to
// WAL, and the loser gets SQLITE_BUSY at once, without the busy handler
// (busy_timeout) being asked: so connect retries busy errors, briefly, for
// up to connectTimeout.
func connect(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(connectTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := db.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (or one of its
// extended codes).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == sqlite3.SQLITE_BUSY
}
