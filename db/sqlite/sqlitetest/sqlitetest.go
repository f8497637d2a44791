// Package sqlitetest gives each test an embedded store of its own: a new
// file in the test's temporary directory, migrated, and closed when the
// test ends. It is the embedded store's counterpart of pgtest.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// template holds the bytes of a store that sqlite.OpenFile created and
// migrated, once per test binary. Applying every migration costs about
// half a second a store under the race detector (SQLite is Go translated
// from C, all of it instrumented), and the suite opens hundreds of
// stores: a copy of the migrated file costs a millisecond, and opening it
// finds every migration applied, as opening a user's store does.
var template struct {
	once  sync.Once
	bytes []byte
	err   error
}

// migrated returns the bytes of a newly migrated store.
func migrated() ([]byte, error) {
	template.once.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-sqlitetest-")
		if err != nil {
			template.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, sqlite.FileName)
		db, err := sqlite.OpenFile(context.Background(), path)
		if err != nil {
			template.err = err
			return
		}
		// Closing checkpoints the write-ahead log into the file and
		// removes it, so the file alone is the store.
		if err := db.Close(); err != nil {
			template.err = err
			return
		}
		if _, err := os.Stat(path + "-wal"); err == nil {
			template.err = fmt.Errorf("the template store kept a write-ahead log after it was closed")
			return
		}
		template.bytes, template.err = os.ReadFile(path)
	})
	return template.bytes, template.err
}

// Open opens a new embedded store for tb and closes it at tb's end, after
// whatever tb's cleanups registered later have closed over it.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	b, err := migrated()
	if err != nil {
		tb.Fatalf("migrate a template store: %v", err)
	}
	path := filepath.Join(tb.TempDir(), sqlite.FileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatalf("write store: %v", err)
	}
	db, err := sqlite.OpenFile(tb.Context(), path)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return db
}
