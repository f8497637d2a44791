package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openStore opens a new store in a data directory of its own, with a table
// the tests write batches to.
func openStore(t *testing.T) (string, *DB) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Write.ExecContext(t.Context(), `CREATE TABLE batches (batch INTEGER, n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

const batchRows = 10

// writeBatch inserts batchRows rows of one batch in one transaction.
func writeBatch(ctx context.Context, db *DB, batch int) error {
	tx, err := db.Write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for n := range batchRows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (batch, n) VALUES ($1, $2)`, batch, n); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// checkBatches fails unless the store at path holds whole batches only, and
// returns how many.
func checkBatches(t *testing.T, path string) int {
	t.Helper()
	db, err := OpenFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var torn, batches int
	if err := db.Read.QueryRowContext(t.Context(),
		`SELECT count(*) FROM (SELECT batch FROM batches GROUP BY batch HAVING count(*) <> $1)`, batchRows).Scan(&torn); err != nil {
		t.Fatal(err)
	}
	if err := db.Read.QueryRowContext(t.Context(), `SELECT count(DISTINCT batch) FROM batches`).Scan(&batches); err != nil {
		t.Fatal(err)
	}
	if torn != 0 {
		t.Fatalf("%s holds %d torn batches: the copy is not one snapshot", path, torn)
	}
	return batches
}

// TestBackupUnderConcurrentWriter copies a store while a writer commits
// batches to it: every copy passes Check and holds whole batches only.
func TestBackupUnderConcurrentWriter(t *testing.T) {
	dir, db := openStore(t)
	ctx := t.Context()
	var written atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for batch := 0; ; batch++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := writeBatch(ctx, db, batch); err != nil {
				werr = err
				return
			}
			written.Add(1)
		}
	}()
	for written.Load() < 20 { // let the writer get going
		time.Sleep(time.Millisecond)
	}
	out := t.TempDir()
	var copies []string
	for i := range 3 {
		dst := filepath.Join(out, "backup-"+string(rune('a'+i))+".db")
		info, err := Backup(ctx, dir, dst, false)
		if err != nil {
			t.Fatal(err)
		}
		if info.Path != dst || info.Bytes == 0 || info.Version == 0 {
			t.Fatalf("Backup reported %+v", info)
		}
		copies = append(copies, dst)
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(copies) {
		t.Fatalf("the backup directory holds %d files, want the %d copies only (no partial files)", len(entries), len(copies))
	}
	prev := 0
	for _, c := range copies {
		n := checkBatches(t, c)
		if n < prev {
			t.Fatalf("%s holds %d batches, an earlier copy %d", c, n, prev)
		}
		prev = n
	}
	if prev == 0 {
		t.Fatal("no copy holds any batch")
	}
}

func TestBackupRefusesExistingFile(t *testing.T) {
	dir, _ := openStore(t)
	dst := filepath.Join(t.TempDir(), "b.db")
	if err := os.WriteFile(dst, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(t.Context(), dir, dst, false); err == nil {
		t.Fatal("Backup overwrote an existing file")
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep me" {
		t.Fatalf("the existing file changed: %q", b)
	}
	if _, err := Backup(t.Context(), dir, dst, true); err != nil {
		t.Fatalf("Backup with overwrite: %v", err)
	}
	if _, err := Check(t.Context(), dst); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesWhatIsNotAStore(t *testing.T) {
	ctx := t.Context()
	tmp := t.TempDir()
	dir, db := openStore(t)
	if err := writeBatch(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(tmp, "good.db")
	if _, err := Backup(ctx, dir, good, false); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	notSQLite := filepath.Join(tmp, "text.db")
	os.WriteFile(notSQLite, []byte("hello, this is not a database at all; "+string(make([]byte, 200))), 0o600)
	truncated := filepath.Join(tmp, "truncated.db")
	os.WriteFile(truncated, data[:len(data)/2], 0o600)
	damaged := filepath.Join(tmp, "damaged.db")
	bad := append([]byte(nil), data...)
	for i := 4096 * 2; i < len(bad) && i < 4096*6; i++ {
		bad[i] = 0xA5 // overwrite whole pages past the header
	}
	os.WriteFile(damaged, bad, 0o600)
	newer := filepath.Join(tmp, "newer.db")
	os.WriteFile(newer, data, 0o600)
	{
		db, err := OpenFile(ctx, newer)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Write.ExecContext(ctx, `INSERT INTO cairn_schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	empty := filepath.Join(tmp, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	foreign := filepath.Join(tmp, "foreign.db") // SQLite, but not Cairn's
	{
		db, err := sql.Open("sqlite", "file:"+foreign)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE notes (body TEXT)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}

	for name, path := range map[string]string{
		"not SQLite": notSQLite, "truncated": truncated, "damaged": damaged,
		"newer migration": newer, "empty file": empty, "foreign SQLite": foreign, "directory": tmp,
	} {
		if _, err := Check(ctx, path); !errors.Is(err, ErrNotAStore) {
			t.Errorf("%s: Check = %v, want ErrNotAStore", name, err)
		}
	}
	if info, err := Check(ctx, good); err != nil || info.Counts["users"] < 0 {
		t.Fatalf("Check(good) = %+v, %v", info, err)
	}
}

// TestRestore refuses a store that is open, then replaces it with the copy
// once it is closed, keeping the store it replaced.
func TestRestore(t *testing.T) {
	ctx := t.Context()
	dir, db := openStore(t)
	for b := range 3 {
		if err := writeBatch(ctx, db, b); err != nil {
			t.Fatal(err)
		}
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := Backup(ctx, dir, backup, false); err != nil {
		t.Fatal(err)
	}
	for b := 3; b < 5; b++ { // written after the backup
		if err := writeBatch(ctx, db, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Restore(ctx, dir, backup); !errors.Is(err, ErrInUse) {
		t.Fatalf("Restore on an open store = %v, want ErrInUse", err)
	}
	db.Close()
	if _, _, err := Restore(ctx, dir, filepath.Join(dir, "missing.db")); err == nil {
		t.Fatal("Restore from a missing file succeeded")
	}
	info, previous, err := Restore(ctx, dir, backup)
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != filepath.Join(dir, FileName) || previous == "" {
		t.Fatalf("Restore = %+v, %q", info, previous)
	}
	if n := checkBatches(t, filepath.Join(dir, FileName)); n != 3 {
		t.Fatalf("the restored store holds %d batches, want the backup's 3", n)
	}
	if n := checkBatches(t, previous); n != 5 {
		t.Fatalf("the store kept aside holds %d batches, want 5 (with what its WAL held)", n)
	}

	// Into a data directory with no store yet.
	fresh := t.TempDir()
	if _, previous, err := Restore(ctx, fresh, backup); err != nil || previous != "" {
		t.Fatalf("Restore into an empty directory = %q, %v", previous, err)
	}
	if n := checkBatches(t, filepath.Join(fresh, FileName)); n != 3 {
		t.Fatalf("restored %d batches, want 3", n)
	}
}
