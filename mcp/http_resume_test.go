package mcp_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/mcp"
)

// sseEvent is one server-sent event: its id and data.
type sseEvent struct{ id, data string }

// openStream sends a request to /mcp as key on session s and returns the
// response and a reader of its events.
func openStream(t *testing.T, s *rawSession, key, method, body string, headers map[string]string) (*http.Response, func() (sseEvent, bool)) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	next := func() (sseEvent, bool) {
		var ev sseEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if seen {
					return ev, true
				}
				continue
			}
			seen = true
			if v, ok := strings.CutPrefix(line, "id:"); ok {
				ev.id = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				ev.data += strings.TrimSpace(v)
			}
		}
		return ev, seen
	}
	return resp, next
}

// TestHTTPStreamResumes: a client whose response stream drops after the
// event that opens it (before the tool's answer) gets the answer by
// reconnecting with Last-Event-ID on its session; another key cannot
// resume that session's stream; and with StreamReplayBytes negative the
// events carry no ids.
func TestHTTPStreamResumes(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	s := openRawSession(t, srv.URL+"/mcp", e.key, "2025-11-25")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_entity_types","arguments":{}}}`
	resp, next := openStream(t, s, e.key, "POST", call, nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered %s, want an event stream", ct)
	}
	first, ok := next()
	if !ok || first.id == "" {
		t.Fatalf("first event has id %q (%d bytes of data): want an id to resume from", first.id, len(first.data))
	}
	resp.Body.Close() // the connection drops here

	_, other := e.agent(t, e.owner.UserID, "other", [3]string{"read", "*", "allow"})
	if resp, _ := openStream(t, s, other, "GET", "", map[string]string{"Last-Event-ID": first.id}); resp.StatusCode < 400 {
		t.Errorf("another key resumed the session's stream: %d", resp.StatusCode)
	}

	// Until the server notices the dropped connection the stream is still
	// its POST's, and a resumption is refused as a conflict: a client
	// retries, as the SDK's does.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, next = openStream(t, s, e.key, "GET", "", map[string]string{"Last-Event-ID": first.id})
		if resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", resp.StatusCode)
	}
	for {
		ev, ok := next()
		if !ok {
			t.Fatal("the resumed stream ended without the tool's answer")
		}
		if ev.data == "" {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(ev.data), &msg); err != nil {
			t.Fatalf("event %q: %v", ev.data, err)
		}
		if msg["id"] != 7.0 {
			continue
		}
		if ev.id == "" || ev.id == first.id {
			t.Errorf("the answer's event id %q, after %q", ev.id, first.id)
		}
		if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Errorf("resumed answer: %v", msg)
		}
		break
	}

	e2, srv2 := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{StreamReplayBytes: -1})
	s2 := openRawSession(t, srv2.URL+"/mcp", e2.key, "2025-11-25")
	_, next2 := openStream(t, s2, e2.key, "POST", call, nil)
	for ev, ok := next2(); ok; ev, ok = next2() {
		if ev.id != "" {
			t.Errorf("without replay an event carries id %q", ev.id)
		}
	}
}
