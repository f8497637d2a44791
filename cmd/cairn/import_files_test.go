package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

// cairnRun runs the binary with the embedded store and returns its stdout.
func cairnRun(t *testing.T, wantOK bool, args ...string) string {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	cmd.Env = append(os.Environ(), "CAIRN_DATABASE_URL=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if (err == nil) != wantOK {
		t.Fatalf("cairn %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, stderr.String())
	}
	return string(out)
}

// TestImportFiles runs cairn import on a directory (generated files and one
// it cannot keep), then again: nothing is stored or queued twice, and an
// import left unfinished (--wait=false) is finished by the next one.
// cairn jobs lists and shows the jobs.
func TestImportFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	src := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var csv strings.Builder
	csv.WriteString("date,description,amount\n")
	for i := range 250 {
		fmt.Fprintf(&csv, "2026-02-%02d,Item %d,-%d.00\n", i%28+1, i, i+1)
	}
	write("bank/feb.csv", []byte(csv.String()))
	write("notes/plan.md", []byte("# Plan\n\nShip the files issue.\n"))
	write("mail/notes.eml", []byte(interprettest.SampleEmail))
	write("tool.bin", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...))
	write(".hidden/secret.txt", []byte("not imported"))

	// First, queue without running (as if the import were interrupted
	// before its jobs ran).
	out := cairnRun(t, true, "import", "--data-dir", dataDir, "--wait=false", src)
	if !strings.Contains(out, "3 files stored, 0 stored before, 1 skipped; 3 interpretation jobs queued") || strings.Contains(out, "secret") {
		t.Fatalf("first import:\n%s", out)
	}
	// Again: nothing new is stored or queued; the unfinished jobs (and the
	// attachment's, queued by the e-mail's job) are run and waited for.
	out = cairnRun(t, true, "import", "--data-dir", dataDir, src)
	if !strings.Contains(out, "0 files stored, 3 stored before, 1 skipped; 0 interpretation jobs queued, 3 unfinished from before") ||
		strings.Count(out, "succeeded") != 3 {
		t.Fatalf("second import:\n%s", out)
	}
	out = cairnRun(t, true, "import", "--data-dir", dataDir, src)
	if !strings.Contains(out, "0 interpretation jobs queued, 0 unfinished from before") {
		t.Fatalf("third import:\n%s", out)
	}
	list := cairnRun(t, true, "jobs", "list", "--data-dir", dataDir)
	if strings.Count(list, "succeeded") < 3 {
		t.Fatalf("jobs list:\n%s", list)
	}
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	var job map[string]any
	if err := json.Unmarshal([]byte(cairnRun(t, true, "jobs", "show", "--data-dir", dataDir, id)), &job); err != nil || job["job_id"] != id {
		t.Fatalf("jobs show: %v %v", job, err)
	}
	cairnRun(t, false, "jobs", "cancel", "--data-dir", dataDir, id) // finished: refused
}
