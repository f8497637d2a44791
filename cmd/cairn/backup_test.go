package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBackupRestore is what an operator does: back up the embedded store
// while cairn serve takes writes, try to restore while it runs (refused),
// stop it, restore, and serve the restored store.
func TestBackupRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	url, kill := startServeProcess(t, dataDir)
	cs := connectHTTP(t, url)
	store := func(batch int) {
		var ents []any
		for i := range 20 {
			ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Backup Co %03d-%02d", batch, i)})
		}
		callTool(t, cs, "store", map[string]any{"entities": ents})
	}
	store(0)

	cairn := func(args ...string) (string, error) {
		out, err := exec.Command(cairnBinary(t), args...).CombinedOutput()
		return string(out), err
	}
	// Backups while a client keeps storing.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for b := 1; ; b++ {
			select {
			case <-stop:
				return
			default:
				store(b)
			}
		}
	}()
	backups := t.TempDir()
	file := filepath.Join(backups, "cairn-backup.db")
	out, err := cairn("backup", "--data-dir", dataDir, file)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup while serving: %v\n%s", err, out)
	}
	if !strings.Contains(out, "entities") || !strings.Contains(out, "schema version") {
		t.Errorf("backup printed %q, want the copy's version and counts", out)
	}
	if out, err := cairn("backup", "--data-dir", dataDir, file); err == nil || !strings.Contains(out, "already exists") {
		t.Errorf("a second backup to the same file: %v\n%s; want a refusal", err, out)
	}
	before := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "company", "limit": 1})

	if out, err := cairn("restore", "--data-dir", dataDir, file); err == nil || !strings.Contains(out, "in use") {
		t.Fatalf("restore while serving: %v\n%s; want it refused as in use", err, out)
	}
	if out, err := cairn("restore", "--data-dir", dataDir, filepath.Join(backups, "nothing.db")); err == nil {
		t.Fatalf("restore from a missing file succeeded:\n%s", out)
	}
	kill()
	// The store the server was using, with what its WAL holds, is kept.
	out, err = cairn("restore", "--data-dir", dataDir, file)
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if !strings.Contains(out, "the store it replaced is kept at") {
		t.Errorf("restore printed %q, want where the replaced store is", out)
	}
	kept, _ := filepath.Glob(filepath.Join(dataDir, "cairn.db.pre-restore-*"))
	if len(kept) == 0 {
		t.Fatal("no pre-restore copy of the replaced store")
	}

	url = startServe(t, dataDir)
	cs = connectHTTP(t, url)
	got := callTool(t, cs, "retrieve_entity_by_identifier", map[string]any{"identifier": "Backup Co 000-07"})
	if ents, _ := got["entities"].([]any); len(ents) != 1 {
		t.Fatalf("after restore, the entity stored before the backup: %v", got)
	}
	after := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "company", "limit": 1})
	if a, b := after["total"].(float64), before["total"].(float64); a == 0 || a > b || int(a)%20 != 0 {
		t.Errorf("restored store holds %v companies (%v before the restore): want whole batches of 20, no more than before", a, b)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "cairn.db")); err != nil {
		t.Fatal(err)
	}
}
