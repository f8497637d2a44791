package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/mcp"
)

// patience bounds every wait on the server in these tests. It is far longer
// than any answer needs, and far shorter than "forever", which is what the
// server used to take.
const patience = 10 * time.Second

// trickle opens a connection to srv, sends the request head with a
// Content-Length of 1000 and one byte of body, and returns the connection
// without sending the rest.
func trickle(t *testing.T, srv *httptest.Server, path string, headers map[string]string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	host := srv.Listener.Addr().String()
	if h, ok := headers["Host"]; ok {
		host = h
	}
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n", path, host)
	for k, v := range headers {
		if k != "Host" {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n{")
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	return conn, bufio.NewReader(conn)
}

// readAnswer reads one response and its error envelope in either shape.
func readAnswer(t *testing.T, r *bufio.Reader) (*http.Response, mcp.ErrorBody) {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer while the body is still arriving: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Success *bool         `json:"success"`
		Error   mcp.ErrorBody `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body.Error
}

// TestHTTPRefusesBeforeReadingBody sends a request whose body trickles in:
// a request that is refused before it is authenticated is answered at once,
// with the connection closed, instead of after its body.
func TestHTTPRefusesBeforeReadingBody(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		status  int
		code    string
	}{
		{"no key", "/mcp", nil, 401, mcp.CodeUnauthorized},
		{"no key, REST", "/mcp/call/store", nil, 401, mcp.CodeUnauthorized},
		{"unknown key", "/mcp", map[string]string{"X-API-Key": "cairn_sk_0000000000000000000000000000000000000000000"}, 401, mcp.CodeUnauthorized},
		{"another agent", "/mcp", map[string]string{"X-API-Key": e.key, "X-Agent-ID": "claude"}, 403, mcp.CodeForbidden},
		{"foreign origin", "/mcp", map[string]string{"Origin": "https://evil.example"}, 403, mcp.CodeForbidden},
		{"foreign host", "/mcp/call/store", map[string]string{"Host": "evil.example"}, 403, mcp.CodeForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := trickle(t, srv, tt.path, tt.headers)
			resp, body := readAnswer(t, r)
			if resp.StatusCode != tt.status || body.Code != tt.code {
				t.Errorf("answer %d %+v, want %d %s", resp.StatusCode, body, tt.status, tt.code)
			}
			if !resp.Close {
				t.Error("the connection stays open, so the server would go on reading the body")
			}
		})
	}
}

// TestHTTPReadTimeout checks that a key holder who stops sending the body
// gets 408 once the read timeout passes, on both the MCP and REST routes.
func TestHTTPReadTimeout(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{ReadTimeout: 200 * time.Millisecond})
	for _, path := range []string{"/mcp", "/mcp/call/store"} {
		t.Run(path, func(t *testing.T) {
			_, r := trickle(t, srv, path, map[string]string{"Authorization": "Bearer " + e.key})
			resp, body := readAnswer(t, r)
			if resp.StatusCode != http.StatusRequestTimeout || body.Code != mcp.CodeRequestTimeout || !resp.Close {
				t.Errorf("answer %d %+v close=%v, want 408 %s and the connection closed", resp.StatusCode, body, resp.Close, mcp.CodeRequestTimeout)
			}
		})
	}
	// A body that arrives in time is served as before.
	resp, env := post(t, srv.URL+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + e.key})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("prompt body: %d %+v, want 200", resp.StatusCode, env.Error)
	}
}

// TestHTTPHostHeader applies the loopback Host rule of the SDK's /mcp to
// every route: the REST facade too answers 403 in its own shape.
func TestHTTPHostHeader(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name, method, path, host string
		status                   int
		rest                     bool
	}{
		{"REST, foreign host", "GET", "/mcp/tools", "evil.example", 403, true},
		{"REST, foreign host with port", "GET", "/mcp/tools", fmt.Sprintf("evil.example:%d", port), 403, true},
		{"REST, localhost", "GET", "/mcp/tools", fmt.Sprintf("localhost:%d", port), 200, true},
		{"REST, IPv4 loopback", "GET", "/mcp/tools", fmt.Sprintf("127.0.0.1:%d", port), 200, true},
		{"health, foreign host", "GET", "/healthz", "evil.example", 403, false},
		{"MCP, foreign host", "POST", "/mcp", "evil.example", 403, false},
		{"MCP, localhost", "POST", "/mcp", "localhost", 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(initializeBody))
			req.Host = tt.host
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 403 {
				return
			}
			var body map[string]json.RawMessage
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			var eb mcp.ErrorBody
			_ = json.Unmarshal(body["error"], &eb)
			_, hasSuccess := body["success"]
			if eb.Code != mcp.CodeForbidden || hasSuccess != tt.rest {
				t.Errorf("body %s, want FORBIDDEN in the %s shape", body, map[bool]string{true: "REST", false: "MCP"}[tt.rest])
			}
		})
	}
}
