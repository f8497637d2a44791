package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// TestCommandsNeedAStore checks that the commands that only work on a store
// (admin, reembed, migrate --status) say there is none where --data-dir
// holds none, exit 1, and create nothing.
func TestCommandsNeedAStore(t *testing.T) {
	commands := [][]string{
		{"admin", "user", "list"},
		{"admin", "agent", "create", "claude"},
		{"admin", "key", "list"},
		{"admin", "consent", "list"},
		{"admin", "audit"},
		{"reembed"},
		{"migrate", "--status"},
	}
	dirs := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"MissingDirectory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "no", "such", "dir") }},
		{"EmptyDirectory", func(t *testing.T) string { return t.TempDir() }},
	}
	for _, d := range dirs {
		for _, args := range commands {
			t.Run(d.name+"/"+strings.Join(args, "_"), func(t *testing.T) {
				t.Parallel()
				dir := d.dir(t)
				_, statErr := os.Stat(dir)
				var stdout, stderr strings.Builder
				code := run(t.Context(), append(args, "--data-dir", dir), &environment{
					stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
					getenv: func(string) string { return "" },
				})
				want := "cairn " + args[0] + ": no Cairn store at " + dir + ": run cairn serve (or cairn migrate) first, or pass --data-dir\n"
				if code != exitError || stderr.String() != want {
					t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr.String(), exitError, want)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout is not empty: %q", stdout.String())
				}
				if _, err := os.Stat(dir); (err == nil) != (statErr == nil) {
					t.Errorf("the data directory %s was created", dir)
				}
				if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err == nil {
					t.Errorf("a store was created in %s", dir)
				}
			})
		}
	}
}
