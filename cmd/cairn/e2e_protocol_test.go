package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// stdioPeer is the built binary under `cairn stdio`, spoken to with
// hand-written JSON-RPC lines: what no SDK client sends (old protocol
// versions, bad frames) can be sent.
type stdioPeer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func startStdioPeer(t *testing.T, env ...string) *stdioPeer {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), cairnBinary(t), "stdio", "--data-dir", filepath.Join(t.TempDir(), "data"))
	cmd.Env = append(os.Environ(), append([]string{"CAIRN_DATABASE_URL="}, env...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{t: t, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return p
}

// send writes one line.
func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next message the server writes.
func (p *stdioPeer) next() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("cairn stdio closed its output")
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			p.t.Fatalf("cairn stdio wrote %q: %v", line, err)
		}
		return msg
	case <-time.After(30 * time.Second):
		p.t.Fatal("cairn stdio did not answer within 30 s")
		return nil
	}
}

// call sends a request and returns its result, failing on a protocol error.
// Notifications the server sends before the answer (a store that creates a
// type announces notifications/resources/list_changed) are skipped, as a
// JSON-RPC client skips them.
func (p *stdioPeer) call(id int, method, params string) map[string]any {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	msg := p.next()
	for msg["id"] == nil && msg["method"] != nil {
		msg = p.next()
	}
	res, ok := msg["result"].(map[string]any)
	if !ok || msg["id"] != float64(id) {
		p.t.Fatalf("%s: %v", method, msg)
	}
	return res
}

// TestProtocolVersionsStdio: every protocol version the official SDKs
// speak, from 2024-11-05 to 2025-11-25, negotiates as asked over stdio and
// works.
func TestProtocolVersionsStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			p := startStdioPeer(t)
			init := p.call(0, "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`, version))
			if init["protocolVersion"] != version {
				t.Fatalf("negotiated %v, want %s", init["protocolVersion"], version)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if tools, _ := p.call(1, "tools/list", `{}`)["tools"].([]any); len(tools) == 0 {
				t.Error("tools/list is empty")
			}
			res := p.call(2, "tools/call", `{"name":"store","arguments":{"entities":[{"entity_type":"company","name":"Acme"}]}}`)
			if res["isError"] == true {
				t.Errorf("store: %v", res)
			}
		})
	}
}
