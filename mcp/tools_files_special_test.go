//go:build unix

package mcp_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// TestStoreFilePathNotRegular: over stdio, store's file_path naming a FIFO
// (which nothing writes), a socket or a directory under a file root answers
// a validation error at once. Opening the FIFO used to block the call, and
// the session, forever.
func TestStoreFilePathNotRegular(t *testing.T) {
	e := newEnv(t)
	// A short root: a socket's path must fit in 108 bytes.
	root, err := os.MkdirTemp("", "cairn-roots")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dir := filepath.Join(root, "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{{"fifo", fifo}, {"directory", dir}}
	if ln, err := net.Listen("unix", filepath.Join(root, "sock")); err == nil {
		t.Cleanup(func() { ln.Close() })
		tests = append(tests, struct{ name, path string }{"socket", filepath.Join(root, "sock")})
	} else {
		t.Logf("no socket case: %v", err)
	}
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: e.know, Files: e.files, FileRoots: []string{root}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := startStdio(t, srv.MCPServer(mcp.FixedPrincipal(e.owner)))
	s.initialize("2025-06-18")
	// One session, so no subtests: its helpers fail the parent test.
	for i, tt := range tests {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"name": "store", "arguments": map[string]any{"file_path": tt.path, "interpret": false}}})
		s.send(string(req))
		a := s.nextAnswer() // fails the test after 5 s without one
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(a.Result, &res); err != nil || !res.IsError || len(res.Content) != 1 {
			t.Fatalf("store of a %s: answer %+v, want a tool error", tt.name, a)
		}
		var env mcp.Envelope
		if err := json.Unmarshal([]byte(res.Content[0].Text), &env); err != nil {
			t.Fatal(err)
		}
		if env.Error.Code != mcp.CodeValidation || !strings.Contains(env.Error.Message, "not a regular file") {
			t.Errorf("store of a %s = %+v, want %s saying it is not a regular file", tt.name, env.Error, mcp.CodeValidation)
		}
	}
}
