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

// TestPoolsKeepTheirConnections uses both handles from more goroutines
// than database/sql keeps idle connections by default, and checks that no
// connection was closed for being idle: each closed connection is opened
// again for the next caller, with its pragmas, its prepared statements
// and its page cache to rebuild.
func TestPoolsKeepTheirConnections(t *testing.T) {
	db, err := OpenFile(t.Context(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	if _, err := db.Write.ExecContext(ctx, `CREATE TABLE counter (n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	writeAtOnce(t, 8, 25, func(w int) error {
		if w%2 == 0 {
			var n int
			return db.Read.QueryRowContext(ctx, `SELECT count(*) FROM counter`).Scan(&n)
		}
		tx, err := db.Write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO counter (n) VALUES (?)`, w); err != nil {
			return err
		}
		return tx.Commit()
	})
	for name, h := range map[string]*sql.DB{"write": db.Write, "read": db.Read} {
		s := h.Stats()
		if s.OpenConnections < 2 {
			t.Errorf("%s: %d connections open after concurrent use, want several (the test no longer uses the pool at once)", name, s.OpenConnections)
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
