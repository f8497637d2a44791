package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEndToEndStdioBadFrame: the binary answers a line that is not JSON with
// a parse error and goes on to answer the request after it.
func TestEndToEndStdioBadFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	cmd := exec.Command(cairnBinary(t), "stdio", "--data-dir", filepath.Join(t.TempDir(), "data"))
	cmd.Env = append(os.Environ(), "CAIRN_DATABASE_URL=")
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // EOF ends the session
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("cairn stdio after stdin closed: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("cairn stdio did not exit within 10s of stdin closing")
		}
	})
	answers := make(chan string)
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			answers <- sc.Text()
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case line, ok := <-answers:
			var m map[string]any
			if !ok || json.Unmarshal([]byte(line), &m) != nil {
				t.Fatalf("stdout: %q (open: %v), want a JSON-RPC response", line, ok)
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatal("no answer within 30s")
			return nil
		}
	}

	if _, err := io.WriteString(stdin, "this is not JSON\n"+
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if m := next(); m["id"] != nil || !hasCode(m, -32700) {
		t.Errorf("answer to the bad line = %v, want error -32700 with id null", m)
	}
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Errorf("answer to initialize = %v, want its result", m)
	}
}

// hasCode reports whether a JSON-RPC response is an error with code.
func hasCode(resp map[string]any, code float64) bool {
	e, _ := resp["error"].(map[string]any)
	return e["code"] == code
}
