package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBackgroundCheckpoint writes more WAL than SQLite's default
// auto-checkpoint (1,000 pages) but less than the writers' backstop, and
// checks that the background checkpointer moves it into the database
// file: without it, the pages would stay in the WAL.
func TestBackgroundCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := OpenFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	if _, err := db.Write.ExecContext(ctx, `CREATE TABLE filler (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	pad := strings.Repeat("x", 3000)
	for i := range 2000 { // about 2,000 pages of WAL
		if _, err := db.Write.ExecContext(ctx, `INSERT INTO filler (v) VALUES ($1)`, pad+string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for fileSize(t, path) < before+1000*4096 {
		if time.Now().After(deadline) {
			t.Fatalf("database file is %d bytes, %d before the writes: the WAL was not checkpointed", fileSize(t, path), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
