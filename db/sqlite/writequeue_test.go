package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// openImpatient opens a store's Write handle as OpenFile does, but with
// SQLite's busy handler off (busy_timeout 0): a writer that finds the
// write lock held fails at once with SQLITE_BUSY instead of sleeping, so
// a test sees every time a writer of the process met another in SQLite
// rather than in the queue.
func openImpatient(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	store, err := OpenFile(t.Context(), path) // creates and migrates it
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	patient := dsn(path, false)
	impatient := strings.Replace(patient, "busy_timeout%2810000%29", "busy_timeout%280%29", 1)
	if impatient == patient {
		t.Fatalf("dsn no longer sets busy_timeout(10000): %s", patient)
	}
	db, err := openWriter(impatient, make(writeQueue, 1))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE counter (n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `INSERT INTO counter (n) VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// writeAtOnce runs write rounds times in each of writers goroutines at
// once (w is the goroutine's number) and fails t, saying how many, if any
// write failed.
func writeAtOnce(t *testing.T, writers, rounds int, write func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Go(func() {
			for range rounds {
				errs <- write(w)
			}
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			if failed == 1 {
				t.Errorf("a writer failed: %v", err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d writes failed", failed, writers*rounds)
	}
}

// TestWritersQueueInProcess runs writers of one process at once, in
// transactions and in single statements, with SQLite's busy handler off:
// none meets SQLITE_BUSY, because they wait for each other in the queue,
// and every increment lands. Without the queue most of them fail.
func TestWritersQueueInProcess(t *testing.T) {
	db := openImpatient(t)
	ctx := t.Context()
	const writers, rounds = 8, 25
	writeAtOnce(t, writers, rounds, func(w int) error {
		if w%2 == 0 {
			_, err := db.ExecContext(ctx, `UPDATE counter SET n = n + 1`)
			return err
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE counter SET n = ?`, n+1); err != nil {
			return err
		}
		return tx.Commit()
	})
	var n int
	if err := db.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*rounds {
		t.Fatalf("counter is %d, want %d", n, writers*rounds)
	}
}

// TestWriteQueueWaitEndsWithContext checks that a writer waiting for its
// turn gives up when its context ends, and that every way a transaction
// ends (commit, rollback, a failed begin) gives the turn on.
func TestWriteQueueWaitEndsWithContext(t *testing.T) {
	db := openImpatient(t)
	ctx := t.Context()
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := db.BeginTx(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("begin while another transaction writes: %v, want the context's deadline", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := db.ExecContext(short2, `UPDATE counter SET n = n + 1`); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("statement while another transaction writes: %v, want the context's deadline", err)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}

	// A begin whose context has already ended fails without holding the
	// queue.
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	if _, err := db.BeginTx(done, nil); err == nil {
		t.Fatal("begin with an ended context succeeded")
	}
	for i := range 3 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatalf("transaction %d after the others ended: %v", i, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE counter SET n = n + 1`); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("counter is %d, want 2 (two commits, one rollback)", n)
	}
}

// TestReadsDoNotQueue checks that a read on the Write handle outside a
// transaction runs while another connection holds the write lock, as WAL
// allows.
func TestReadsDoNotQueue(t *testing.T) {
	db := openImpatient(t)
	ctx := t.Context()
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, `UPDATE counter SET n = 7`); err != nil {
		t.Fatal(err)
	}
	read, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(read, `SELECT n FROM counter`).Scan(&n); err != nil {
		t.Fatalf("read beside a writer: %v", err)
	}
	if n != 0 {
		t.Fatalf("read %d beside an uncommitted write, want 0", n)
	}
}

// TestWritesThatReturnRowsQueue runs writers that read back what they
// wrote (INSERT … RETURNING, as the rate limiter counts a hit) outside a
// transaction, beside writers in transactions, with SQLite's busy handler
// off: they queue like any other write, so none meets SQLITE_BUSY, and
// every hit is counted.
func TestWritesThatReturnRowsQueue(t *testing.T) {
	db := openImpatient(t)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `CREATE TABLE hits (k INTEGER PRIMARY KEY, n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 8, 25
	writeAtOnce(t, writers, rounds, func(w int) error {
		if w%2 == 0 {
			var n int
			return db.QueryRowContext(ctx, `INSERT INTO hits (k, n) VALUES (1, 1)
				ON CONFLICT (k) DO UPDATE SET n = n + 1 RETURNING n`).Scan(&n)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `UPDATE counter SET n = n + 1`); err != nil {
			return err
		}
		return tx.Commit()
	})
	var hits int
	if err := db.QueryRowContext(ctx, `SELECT n FROM hits WHERE k = 1`).Scan(&hits); err != nil {
		t.Fatal(err)
	}
	if hits != writers/2*rounds {
		t.Fatalf("%d hits counted, want %d", hits, writers/2*rounds)
	}
}

// TestReadInsideAWriteWhileWritersWait reads outside a transaction while
// holding one, with more writers waiting for their turn than the Write
// handle kept connections, as a store does when it reads the schema
// registry: each waiting writer holds a connection of the pool while it
// waits, so a bounded pool had none left for the read, which waited for
// the writers, which waited for the transaction, until the call's
// deadline.
func TestReadInsideAWriteWhileWritersWait(t *testing.T) {
	db := openWithCounter(t)
	ctx := t.Context()
	tx, err := db.Write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const waiting = 8
	var wg sync.WaitGroup
	errs := make(chan error, waiting)
	for range waiting {
		wg.Go(func() {
			_, err := db.Write.ExecContext(ctx, `INSERT INTO counter (n) VALUES (1)`)
			errs <- err
		})
	}
	// Until the writers hold connections while they wait (or every one
	// the pool allows).
	for deadline := time.Now().Add(10 * time.Second); ; {
		s := db.Write.Stats()
		if s.InUse == waiting+1 || s.MaxOpenConnections > 0 && s.InUse == s.MaxOpenConnections {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writers did not start waiting: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n int
	if err := db.Write.QueryRowContext(readCtx, `SELECT count(*) FROM counter`).Scan(&n); err != nil {
		t.Fatalf("read inside a transaction with %d writers waiting: %v", waiting, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO counter (n) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a waiting writer failed: %v", err)
		}
	}
	if err := db.Write.QueryRowContext(ctx, `SELECT count(*) FROM counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != waiting+1 {
		t.Errorf("%d rows, want %d", n, waiting+1)
	}
}
