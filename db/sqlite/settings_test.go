package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestConnectionSettings checks the pragmas every connection of both
// handles runs with: a setting lost from dsn would go unnoticed by every
// other test but cost durability (synchronous, foreign_keys) or speed.
func TestConnectionSettings(t *testing.T) {
	db, err := OpenFile(t.Context(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	want := map[string]string{
		"journal_mode": "wal",
		"synchronous":  "1", // NORMAL
		"foreign_keys": "1",
		"temp_store":   "2", // MEMORY
		"busy_timeout": "10000",
	}
	for name, h := range map[string]*sql.DB{"write": db.Write, "read": db.Read} {
		for pragma, v := range want {
			var got string
			if err := h.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", name, pragma, err)
			}
			if got != v {
				t.Errorf("%s: PRAGMA %s = %s, want %s", name, pragma, got, v)
			}
		}
	}
}

// TestPoolsKeepTheirConnections has four callers of each handle hold a
// connection at once (more than database/sql keeps idle by default), and
// checks that none of the four was closed for being idle once they let
// go: each closed connection is opened again for the next caller, with
// its pragmas, its prepared statements and its page cache to rebuild.
func TestPoolsKeepTheirConnections(t *testing.T) {
	db := openWithCounter(t)
	ctx := t.Context()
	const callers = 4
	for name, h := range map[string]*sql.DB{"write": db.Write, "read": db.Read} {
		var holding sync.WaitGroup
		holding.Add(callers)
		writeAtOnce(t, callers, 1, func(int) error {
			// A plain SELECT, which takes no turn of the write queue,
			// holds its connection until its rows are closed.
			rows, err := h.QueryContext(ctx, `SELECT n FROM counter`)
			holding.Done()
			if err != nil {
				return err
			}
			holding.Wait() // every caller holds a connection
			return rows.Close()
		})
		s := h.Stats()
		if s.OpenConnections != callers {
			t.Errorf("%s: %d connections open after %d callers held one each, want %d", name, s.OpenConnections, callers, callers)
		}
		if s.MaxIdleClosed > 0 {
			t.Errorf("%s: %d connections closed for being idle, want none (pool stats %+v)", name, s.MaxIdleClosed, s)
		}
	}
}

// TestReadsInsideReadsDoNotStarve runs more read transactions at once
// than there are processors, each reading outside itself before it ends,
// as an entity search reads the stored entity embeddings inside its
// graph transaction: with a bounded Read pool, the transactions held
// every connection and each waited for another, until their deadline.
func TestReadsInsideReadsDoNotStarve(t *testing.T) {
	db, err := OpenFile(t.Context(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	readers := 2*runtime.GOMAXPROCS(0) + 4
	var began sync.WaitGroup
	began.Add(readers)
	writeAtOnce(t, readers, 1, func(int) error {
		tx, err := db.Read.BeginTx(ctx, nil)
		if err != nil {
			began.Done()
			return err
		}
		defer tx.Rollback()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
			began.Done()
			return err
		}
		// Every transaction holds its connection before any reads
		// outside it.
		began.Done()
		began.Wait()
		return db.Read.QueryRowContext(ctx, `SELECT 1`).Scan(&n)
	})
}

// openWithCounter opens a new store with a table counter (n INTEGER).
func openWithCounter(t *testing.T) *DB {
	t.Helper()
	db, err := OpenFile(t.Context(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Write.ExecContext(t.Context(), `CREATE TABLE counter (n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}
