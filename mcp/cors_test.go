package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

func TestHTTPCORSPreflight(t *testing.T) {
	_, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	tests := []struct {
		name, path, origin string
		status             int
	}{
		{"MCP, allowed origin", "/mcp", "https://app.example.com", http.StatusNoContent},
		{"MCP, loopback origin", "/mcp", "http://localhost:5173", http.StatusNoContent},
		{"REST, allowed origin", "/mcp/call/store", "https://app.example.com", http.StatusNoContent},
		{"MCP, refused origin", "/mcp", "https://evil.example", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No key: browsers never send one on a preflight.
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, srv.URL+tt.path, nil)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			h := resp.Header
			if tt.status != http.StatusNoContent {
				if got := h.Get("Access-Control-Allow-Origin"); got != "" {
					t.Errorf("refused origin got Access-Control-Allow-Origin %q", got)
				}
				return
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != tt.origin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.origin)
			}
			for _, m := range []string{"GET", "POST", "DELETE", "OPTIONS"} {
				if !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) {
					t.Errorf("Access-Control-Allow-Methods %q lacks %s", h.Get("Access-Control-Allow-Methods"), m)
				}
			}
			for _, name := range []string{"Authorization", "Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version",
				"Last-Event-ID", "X-API-Key", "X-Agent-ID"} {
				if !strings.Contains(h.Get("Access-Control-Allow-Headers"), name) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", h.Get("Access-Control-Allow-Headers"), name)
				}
			}
			if h.Get("Access-Control-Max-Age") == "" {
				t.Error("no Access-Control-Max-Age")
			}
			if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
				t.Errorf("Vary = %q, want Origin", h.Values("Vary"))
			}
		})
	}
}

// TestHTTPCORSAnswers checks that real answers, successes and refusals,
// let a page on an allowed origin read them and the headers a client needs.
func TestHTTPCORSAnswers(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	const origin = "https://app.example.com"
	auth := "Bearer " + e.key
	tests := []struct {
		name, method, path string
		headers            map[string]string
		status             int
		header             string // one exposed header the answer carries
	}{
		{"MCP initialize", "POST", "/mcp", map[string]string{"Authorization": auth}, 200, "Mcp-Session-Id"},
		{"REST tools", "GET", "/mcp/tools", map[string]string{"Authorization": auth}, 200, "X-RateLimit-Remaining"},
		{"no key", "POST", "/mcp", nil, 401, "WWW-Authenticate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(initializeBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Origin", origin)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := resp.Header
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, origin)
			}
			exposed := h.Get("Access-Control-Expose-Headers")
			for _, name := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "X-RateLimit-Limit", "X-RateLimit-Remaining",
				"X-RateLimit-Reset", "Retry-After", "WWW-Authenticate"} {
				if !strings.Contains(exposed, name) {
					t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, name)
				}
			}
			if h.Get(tt.header) == "" {
				t.Errorf("the answer has no %s to expose", tt.header)
			}
			if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
				t.Errorf("Vary = %q, want Origin", h.Values("Vary"))
			}
		})
	}
	// Without an Origin (every non-browser client) there is nothing to allow.
	resp, _ := post(t, srv.URL+"/mcp", initializeBody, map[string]string{"Authorization": auth})
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("no Origin, yet Access-Control-Allow-Origin = %q", got)
	}
}
