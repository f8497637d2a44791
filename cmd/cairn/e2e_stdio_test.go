package main

import (
	"strings"
	"testing"
)

// TestEndToEndStdioBadFrame: the binary answers a line that is not JSON, or
// not valid UTF-8, with a parse error and goes on to answer the requests
// after it.
func TestEndToEndStdioBadFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := startStdioPeer(t)
	p.send("this is not JSON")
	if m := p.next(); m["id"] != nil || !hasCode(m, -32700) {
		t.Errorf("answer to the bad line = %v, want error -32700 with id null", m)
	}
	p.call(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}")
	if m := p.next(); !hasCode(m, -32700) {
		t.Errorf("answer to invalid UTF-8 = %v, want error -32700", m)
	}
	p.send("{" + strings.Repeat(`"a":{`, 100) + strings.Repeat("}", 101))
	if m := p.next(); !hasCode(m, -32700) && !hasCode(m, -32600) {
		t.Errorf("answer to nesting 100 deep = %v, want a parse or invalid-request error", m)
	}
	if tools, _ := p.call(3, "tools/list", `{}`)["tools"].([]any); len(tools) == 0 {
		t.Error("tools/list after the bad frames is empty")
	}
}

// hasCode reports whether a JSON-RPC response is an error with code.
func hasCode(resp map[string]any, code float64) bool {
	e, _ := resp["error"].(map[string]any)
	return e["code"] == code
}
