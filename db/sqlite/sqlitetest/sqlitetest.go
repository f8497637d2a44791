// Package sqlitetest gives each test an embedded store of its own: a new
// file in the test's temporary directory, migrated, and closed when the
// test ends. It is the embedded store's counterpart of pgtest.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// Open opens a new embedded store for tb and closes it at tb's end, after
// whatever tb's cleanups registered later have closed over it.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.OpenFile(tb.Context(), filepath.Join(tb.TempDir(), sqlite.FileName))
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
