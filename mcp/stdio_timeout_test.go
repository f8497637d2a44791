package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// TestStdioCallTimeoutStuckHandler: over stdio, a call whose handler is
// stuck in a blocking call that ignores its context (as a read of a FIFO
// is) still answers TIMEOUT at its deadline, and the session goes on
// answering.
func TestStdioCallTimeoutStuckHandler(t *testing.T) {
	s, err := NewServer(Deps{}, Options{CallTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	type in struct{}
	type out struct {
		Done bool `json:"done"`
	}
	stuck := newTool(toolSpec{name: "stuck", title: "Stuck", description: "blocks, deaf to its context", toolset: ToolsetEntities, ann: readOnly, budget: BudgetList},
		func(context.Context, *Call, in) (out, error) {
			<-release
			return out{Done: true}, nil
		})
	s.tools = append(s.tools, stuck)
	s.byName["stuck"] = stuck

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := s.MCPServer(FixedPrincipal(consent.Principal{UserID: "u", AgentName: "owner", Owner: true}))
	ss, err := srv.Connect(t.Context(), &StdioTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		outW.Close()
		_ = ss.Close()
	})
	t.Cleanup(func() { close(release) }) // first, so that the session can end
	frames := make(chan map[string]any, 16)
	go func() {
		dec := json.NewDecoder(outR)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(frames)
				return
			}
			frames <- m
		}
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func(within time.Duration) map[string]any {
		t.Helper()
		select {
		case m, ok := <-frames:
			if !ok {
				t.Fatal("the session ended")
			}
			return m
		case <-time.After(within):
			t.Fatalf("no answer within %v", within)
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next(5 * time.Second)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	start := time.Now()
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{}}}`)
	m := next(5 * time.Second)
	took := time.Since(start)
	res, _ := m["result"].(map[string]any)
	text := ""
	if content, _ := res["content"].([]any); len(content) == 1 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	if m["id"] != float64(2) || res["isError"] != true || !strings.Contains(text, `"code":"`+CodeTimeout+`"`) {
		t.Fatalf("answer to the stuck call = %v, want a %s tool error", m, CodeTimeout)
	}
	if took > 2*time.Second {
		t.Errorf("the stuck call answered after %v, want at its 100ms deadline", took)
	}
	t.Logf("the stuck call answered %s after %v", CodeTimeout, took.Round(time.Millisecond))
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := next(5 * time.Second); m["id"] != float64(3) {
		t.Errorf("ping after the stuck call = %v", m)
	}
}

// TestCallPanicInHandler: a handler that panics, now on a goroutine of its
// own, is still an internal error and not a crash.
func TestCallPanicInHandler(t *testing.T) {
	s, err := NewServer(Deps{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type in struct{}
	type out struct{}
	boom := newTool(toolSpec{name: "boom", title: "Boom", description: "panics", toolset: ToolsetEntities, ann: readOnly, budget: BudgetList},
		func(context.Context, *Call, in) (out, error) { panic("boom") })
	s.tools = append(s.tools, boom)
	s.byName["boom"] = boom
	_, e := s.Invoke(t.Context(), consent.Principal{UserID: "u", AgentName: "owner", Owner: true}, "boom", json.RawMessage(`{}`))
	if e == nil || e.Body.Code != CodeInternal {
		t.Fatalf("a panicking handler = %+v, want %s", e, CodeInternal)
	}
}
