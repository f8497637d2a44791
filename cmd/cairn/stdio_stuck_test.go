//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStdioStopsWithStuckWork: SIGTERM ends `cairn stdio` within
// stopTimeout even when its work cannot finish. Here the client stops
// reading stdout, so the answers to its calls can never be written; that
// used to keep the process alive after SIGTERM until SIGKILL.
func TestStdioStopsWithStuckWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// Parallel: most of its time is waiting for the stuck call and the
	// stop timeout, which other tests of the package can use.
	t.Parallel()
	cmd := exec.Command(cairnBinary(t), "stdio", "--data-dir", filepath.Join(t.TempDir(), "data"))
	cmd.Env = append(os.Environ(), "CAIRN_DATABASE_URL=")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// stdout is a pipe nobody reads: once its buffer is full, every
	// answer blocks. It stays open (referenced by the cleanup) so that
	// writes block rather than fail.
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var stderr syncBuffer
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errPipe)
		once := sync.OnceFunc(func() { close(serving) })
		for sc.Scan() {
			fmt.Fprintln(&stderr, sc.Text())
			if strings.Contains(sc.Text(), "serving MCP on stdio") {
				once()
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		in.Close()
		out.Close()
	})
	select {
	case <-serving:
	case <-time.After(60 * time.Second):
		t.Fatalf("cairn stdio did not start within 60s:\n%s", stderr.String())
	}
	go func() {
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := 1; i <= 200; i++ {
			if _, err := fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	time.Sleep(2 * time.Second) // for stdout's buffer to fill
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		took := time.Since(signalled)
		t.Logf("exited %v after SIGTERM (%v); stderr ends %q", took.Round(100*time.Millisecond), err, lastLine(stderr.String()))
		if took > stopTimeout+3*time.Second {
			t.Errorf("exited %v after SIGTERM, want within %v", took, stopTimeout)
		}
	case <-time.After(stopTimeout + 15*time.Second):
		t.Fatalf("cairn stdio still running %v after SIGTERM", stopTimeout+15*time.Second)
	}
}

// TestStdioStoreFIFO: store's file_path naming a FIFO under --file-roots,
// which nothing writes, answers a validation error at once. Opening the
// FIFO used to block the call past --call-timeout and SIGTERM.
func TestStdioStoreFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	p := startStdioPeer(t, "CAIRN_FILE_ROOTS="+root, "CAIRN_CALL_TIMEOUT=5s")
	p.call(0, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	start := time.Now()
	res := p.call(1, "tools/call", fmt.Sprintf(`{"name":"store","arguments":{"file_path":%q}}`, fifo))
	took := time.Since(start)
	content, _ := res["content"].([]any)
	text := ""
	if len(content) == 1 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	t.Logf("answered in %v: %s", took.Round(time.Millisecond), text)
	if res["isError"] != true || !strings.Contains(text, `"code":"VALIDATION_ERROR"`) || !strings.Contains(text, "not a regular file") {
		t.Errorf("store of a FIFO = %v, want VALIDATION_ERROR: not a regular file", res)
	}
	if took > 2*time.Second {
		t.Errorf("store of a FIFO answered after %v, want at once", took)
	}
}

// TestExitIfStuck: once its context is cancelled, exitIfStuck waits, then
// says why on stderr and exits with exitError; before that it does nothing.
func TestExitIfStuck(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var stderr syncBuffer
	codes := make(chan int, 1)
	go exitIfStuck(ctx, 50*time.Millisecond, &stderr, func(code int) { codes <- code })
	select {
	case code := <-codes:
		t.Fatalf("exited (%d) before the signal", code)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case code := <-codes:
		if code != exitError || !strings.Contains(stderr.String(), "still running 50ms after the signal to stop") {
			t.Errorf("exit %d, stderr %q; want %d and a line saying why", code, stderr.String(), exitError)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not exit after the signal")
	}
}
