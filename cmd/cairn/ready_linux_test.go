package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// TestEmbeddedStoreOnFullDisk puts the embedded store on a small tmpfs,
// fills the disk, and checks that stdio refuses to start, that /readyz's
// check fails while the disk is full and passes once there is room again,
// and that the refused start keeps the store. Mounting needs privileges
// (root, or CAP_SYS_ADMIN); without them the test skips.
func TestEmbeddedStoreOnFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (%v); the read-only variants of TestReadyzRefusesReadOnlyStore still run", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	dir := filepath.Join(mnt, "data")
	if _, err := sqlite.Migrate(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	fill := func() {
		t.Helper()
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := make([]byte, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return
			}
		}
	}
	free := func() {
		t.Helper()
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}

	fill()
	var stderr strings.Builder
	code := run(t.Context(), []string{"stdio", "--data-dir", dir}, &environment{
		stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
		getenv: func(string) string { return "" },
	})
	if msg := lastLine(stderr.String()); code != exitError || !strings.Contains(msg, "cairn stdio: the store cannot be written: embedded "+dir) ||
		!strings.Contains(msg, "the disk has room") {
		t.Errorf("stdio on a full disk: exit %d, stderr:\n%s\nwant exit %d and that the store cannot be written", code, stderr.String(), exitError)
	}
	if err := requireStore(dir); err != nil {
		t.Errorf("the refused start removed the store that was there: %v", err)
	}
	free()

	a := openTestApp(t, appConfig{dataDir: dir})
	if err := a.ready(t.Context()); err != nil {
		t.Fatalf("ready with room on the disk: %v", err)
	}
	// Empty the WAL first: SQLite reuses a WAL file from its start once it
	// has been checkpointed (as the background checkpointer may have done
	// just now), and a write into space the file already has takes no room
	// on the disk: the store can still take it, and is ready until the
	// WAL must grow. A truncated WAL must grow for any write.
	// The app's own background work may write between the truncation and
	// the fill and give the WAL room again (seen once in about five runs
	// under the whole suite): the check is of a full disk with an empty
	// WAL, so until the WAL is empty on a full disk, free it and try again.
	wal := filepath.Join(dir, sqlite.FileName+"-wal")
	for attempt := 1; ; attempt++ {
		if _, err := a.backend.control.ExecContext(t.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
		fill()
		st, err := os.Stat(wal)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() == 0 {
			break
		}
		free()
		if attempt == 20 {
			t.Fatalf("the WAL held %d bytes on a full disk in each of %d attempts: something writes all the time", st.Size(), attempt)
		}
	}
	if err := a.ready(t.Context()); !errors.Is(err, errNotWritable) {
		t.Errorf("ready on a full disk: %v, want %v", err, errNotWritable)
	}
	free()
	if err := a.ready(t.Context()); err != nil {
		t.Errorf("ready with room on the disk again: %v", err)
	}
}
