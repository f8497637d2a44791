package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// TestFailedStartLeavesNoStore starts serve and stdio in ways that fail
// (an address in use, an owner key that is too short, an agent that does
// not exist) and checks that a start that created the store removes it,
// and that a store that was there before is kept.
func TestFailedStartLeavesNoStore(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	inUse := held.Addr().String()

	// Where the data directory is, relative to a fresh temporary
	// directory, and what is there before the start.
	type before int
	const (
		nothing  before = iota // the data directory's parent is missing too
		emptyDir               // the data directory exists, empty
		aStore                 // the data directory holds a store
	)
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		before   before
		wantCode int
		wantErr  string
	}{
		{"AddressInUse/NewDirectory", []string{"serve", "--addr", inUse}, nil, nothing, exitError, "listen on " + inUse},
		{"AddressInUse/EmptyDirectory", []string{"serve", "--addr", inUse}, nil, emptyDir, exitError, "listen on " + inUse},
		{"AddressInUse/ExistingStore", []string{"serve", "--addr", inUse}, nil, aStore, exitError, "listen on " + inUse},
		{"ShortOwnerKey/NewDirectory", []string{"serve", "--addr", "127.0.0.1:0"}, map[string]string{"CAIRN_OWNER_KEY": "short"}, nothing, exitUsage, "CAIRN_OWNER_KEY"},
		{"ShortOwnerKey/EmptyDirectory", []string{"serve", "--addr", "127.0.0.1:0"}, map[string]string{"CAIRN_OWNER_KEY": "short"}, emptyDir, exitUsage, "CAIRN_OWNER_KEY"},
		{"ShortOwnerKey/ExistingStore", []string{"serve", "--addr", "127.0.0.1:0"}, map[string]string{"CAIRN_OWNER_KEY": "short"}, aStore, exitUsage, "CAIRN_OWNER_KEY"},
		{"StdioNoSuchAgent/NewDirectory", []string{"stdio", "--agent", "nobody"}, nil, nothing, exitUsage, `--agent "nobody"`},
		{"StdioNoSuchAgent/EmptyDirectory", []string{"stdio", "--agent", "nobody"}, nil, emptyDir, exitUsage, `--agent "nobody"`},
		{"StdioShortOwnerKey/ExistingStore", []string{"stdio"}, map[string]string{"CAIRN_OWNER_KEY": "short"}, aStore, exitUsage, "CAIRN_OWNER_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, "parent", "data")
			switch tt.before {
			case emptyDir:
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			case aStore:
				if _, err := sqlite.Migrate(t.Context(), dir); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr strings.Builder
			code := run(t.Context(), append(tt.args, "--data-dir", dir), &environment{
				stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				getenv: func(k string) string { return tt.env[k] },
			})
			if code != tt.wantCode || !strings.Contains(lastLine(stderr.String()), tt.wantErr) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), tt.wantCode, tt.wantErr)
			}
			switch tt.before {
			case nothing:
				if _, err := os.Stat(filepath.Join(root, "parent")); err == nil {
					t.Errorf("the failed start left the directories it created: %s", filepath.Join(root, "parent"))
				}
			case emptyDir:
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatalf("the failed start removed the data directory that was there before: %v", err)
				}
				for _, e := range entries {
					t.Errorf("the failed start left %s in the data directory", e.Name())
				}
			case aStore:
				if err := requireStore(dir); err != nil {
					t.Errorf("the failed start removed the store that was there before: %v", err)
				}
			}
		})
	}
}
