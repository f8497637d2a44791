package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// TestStressClientsSmoke runs cmd/cairn/testdata/node/stress-clients.mjs,
// many TypeScript SDK clients of one `cairn serve` at once, on the
// embedded store and on PostgreSQL, so that it cannot rot, and fails if
// any call failed: a store, a memory search, a context load … that meets
// another in the server must still answer. Six clients make twelve calls
// each (every tool twice): a count, not a time, so that a busy machine
// makes the same calls, only slower. It checks that every tool was
// called, never how fast.
func TestStressClientsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server with several clients")
	}
	dir := nodeClientDir(t)
	for _, backend := range []string{"embedded", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			args := []string{filepath.Join(dir, "stress-clients.mjs"), "--cairn", cairnBinary(t), "--clients", "6", "--rounds", "12", "--seconds", "60"}
			if backend == "postgres" {
				args = append(args, "--database-url", pgtest.URL(t))
			}
			cmd := exec.CommandContext(t.Context(), "node", args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("stress-clients.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			for _, tool := range []string{"store", "create_relationships", "save_memory", "search_memory", "get_user_context", "retrieve_entities"} {
				if !strings.Contains(stdout.String(), "| "+tool+" | ") {
					t.Errorf("no row for %s in:\n%s", tool, stdout.String())
				}
			}
		})
	}
}
