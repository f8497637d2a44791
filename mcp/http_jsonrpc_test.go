package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// rawSession is an MCP session over Streamable HTTP driven with hand-made
// JSON-RPC, for what no SDK client sends: batches, odd bodies, old
// protocol versions.
type rawSession struct {
	t       *testing.T
	url     string
	key     string
	version string
	id      string
}

// openRawSession initializes a session at the given protocol version.
func openRawSession(t *testing.T, url, key, version string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, key: key, version: version}
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version)
	resp, msgs := s.post(init)
	if resp.StatusCode != 200 || len(msgs) != 1 {
		t.Fatalf("initialize: %d %v", resp.StatusCode, msgs)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if got := msgs[0]["result"].(map[string]any)["protocolVersion"]; got != version {
		t.Fatalf("initialize %s: negotiated %v", version, got)
	}
	if resp, _ := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return s
}

// post sends a body and returns the response and every JSON-RPC message in
// it, whether sent as JSON or as server-sent events, batches flattened.
func (s *rawSession) post(body string) (*http.Response, []map[string]any) {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(s.t.Context(), "POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.key)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var payloads [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(data) != "" {
				payloads = append(payloads, []byte(data))
			}
		}
	} else if len(bytes.TrimSpace(raw)) > 0 {
		payloads = append(payloads, raw)
	}
	var msgs []map[string]any
	for _, p := range payloads {
		var one map[string]any
		var many []map[string]any
		if json.Unmarshal(p, &many) == nil {
			msgs = append(msgs, many...)
		} else if json.Unmarshal(p, &one) == nil {
			msgs = append(msgs, one)
		}
	}
	return resp, msgs
}

// toolOutcome returns "ok" or the error code of a tools/call response.
func toolOutcome(t *testing.T, msg map[string]any) string {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		return fmt.Sprintf("protocol error %v", msg["error"])
	}
	if res["isError"] != true {
		return "ok"
	}
	var env mcp.Envelope
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("tool error is not the envelope: %s", text)
	}
	return env.Error.Code
}

func storeCall(id int, name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"store","arguments":{"entities":[{"entity_type":"company","name":%q}]}}}`, id, name)
}

// TestHTTPBatchCountsEveryCall is the regression test of batched JSON-RPC
// bypassing the limits: one HTTP request carrying 30 store calls, with a
// store limit of 10, stores 10; each of the other 20 is refused on its own.
func TestHTTPBatchCountsEveryCall(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 1000, consent.RateClassStore: 10}}, mcp.HTTPOptions{})
	s := openRawSession(t, srv.URL+"/mcp", e.key, "2025-03-26")
	calls := make([]string, 30)
	for i := range calls {
		calls[i] = storeCall(i+1, fmt.Sprintf("Batch company %02d", i))
	}
	resp, msgs := s.post("[" + strings.Join(calls, ",") + "]")
	if resp.StatusCode != 200 || len(msgs) != 30 {
		t.Fatalf("batch: %d with %d responses, want 200 with 30", resp.StatusCode, len(msgs))
	}
	outcomes := map[string]int{}
	for _, m := range msgs {
		outcomes[toolOutcome(t, m)]++
	}
	if outcomes["ok"] != 10 || outcomes[mcp.CodeRateLimited] != 20 {
		t.Errorf("batch outcomes %v, want 10 ok and 20 %s", outcomes, mcp.CodeRateLimited)
	}
	if resp.Header.Get("X-RateLimit-Limit") != "10" {
		t.Errorf("X-RateLimit-Limit = %q, want the store class's 10", resp.Header.Get("X-RateLimit-Limit"))
	}
	out, merr := e.callAs(t, e.owner, "retrieve_entities", map[string]any{"entity_type": "company"})
	if merr != nil {
		t.Fatal(merr)
	}
	if n := out["total"]; n != float64(10) {
		t.Errorf("%d companies stored, want 10", n)
	}
	// The window is spent: the next call alone is refused too, and says so
	// in its headers.
	resp, msgs = s.post(storeCall(99, "One more"))
	if len(msgs) != 1 || toolOutcome(t, msgs[0]) != mcp.CodeRateLimited || resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("store after the batch: %v, headers %v; want RATE_LIMIT_EXCEEDED, remaining 0, Retry-After", msgs, resp.Header)
	}
}

// TestHTTPBatchOfOtherMessagesCounts: messages that are not tool calls
// count one each, batched or not.
func TestHTTPBatchOfOtherMessagesCounts(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 10}}, mcp.HTTPOptions{})
	s := openRawSession(t, srv.URL+"/mcp", e.key, "2025-03-26") // 2 of 10
	list := make([]string, 9)
	for i := range list {
		list[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
	}
	if resp, _ := s.post("[" + strings.Join(list, ",") + "]"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("9 tools/list with 8 left in the window: %d, want 429", resp.StatusCode)
	}
}

// TestHTTPRateClassOfTheCallThatRuns is the regression test of the limiter
// reading the tool name differently from the SDK: a key that differs only
// in case must not move a store into another class.
func TestHTTPRateClassOfTheCallThatRuns(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 100, consent.RateClassStore: 1}}, mcp.HTTPOptions{})
	s := openRawSession(t, srv.URL+"/mcp", e.key, "2025-06-18")
	var got []string
	for i := range 2 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"store","arguments":{"entities":[{"entity_type":"company","name":"Case %d"}]},"NAME":"list_entity_types"}}`, i+1, i)
		_, msgs := s.post(body)
		if len(msgs) != 1 {
			t.Fatalf("call %d: %v", i, msgs)
		}
		got = append(got, toolOutcome(t, msgs[0]))
	}
	if got[0] != "ok" || got[1] != mcp.CodeRateLimited {
		t.Errorf("two stores disguised as list_entity_types: %v, want ok then %s (the store class)", got, mcp.CodeRateLimited)
	}
}

// TestHTTPUnknownToolIsAToolError: a call of a tool that does not exist is
// a tool error that lists the available tools, not a protocol error.
func TestHTTPUnknownToolIsAToolError(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	s := openRawSession(t, srv.URL+"/mcp", e.key, "2025-11-25")
	_, msgs := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if len(msgs) != 1 || toolOutcome(t, msgs[0]) != mcp.CodeUnknownTool {
		t.Fatalf("unknown tool: %v, want the tool error %s", msgs, mcp.CodeUnknownTool)
	}
	text := msgs[0]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	var env mcp.Envelope
	_ = json.Unmarshal([]byte(text), &env)
	if tools, _ := env.Error.Details["available_tools"].([]any); len(tools) != len(e.server.Tools()) {
		t.Errorf("available_tools = %v, want all %d tools", env.Error.Details["available_tools"], len(e.server.Tools()))
	}
}

// TestProtocolVersionsHTTP: every protocol version the official SDKs speak,
// from 2024-11-05 to 2025-11-25, negotiates as asked and works: tools are
// listed, and a store is read back.
func TestProtocolVersionsHTTP(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	for i, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			s := openRawSession(t, srv.URL+"/mcp", e.key, version)
			_, msgs := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if len(msgs) != 1 {
				t.Fatalf("tools/list: %v", msgs)
			}
			if tools, _ := msgs[0]["result"].(map[string]any)["tools"].([]any); len(tools) != len(e.server.Tools()) {
				t.Errorf("tools/list: %d tools, want %d", len(tools), len(e.server.Tools()))
			}
			_, msgs = s.post(storeCall(2, fmt.Sprintf("Version company %d", i)))
			if len(msgs) != 1 || toolOutcome(t, msgs[0]) != "ok" {
				t.Fatalf("store: %v", msgs)
			}
			var stored struct {
				Entities []struct {
					EntityID string `json:"entity_id"`
				} `json:"entities"`
			}
			b, _ := json.Marshal(msgs[0]["result"].(map[string]any)["structuredContent"])
			_ = json.Unmarshal(b, &stored)
			_, msgs = s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"retrieve_entity_snapshot","arguments":{"entity_id":%q}}}`, stored.Entities[0].EntityID))
			if len(msgs) != 1 || toolOutcome(t, msgs[0]) != "ok" {
				t.Errorf("retrieve_entity_snapshot: %v", msgs)
			}
		})
	}
}
