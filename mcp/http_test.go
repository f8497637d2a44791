package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

func newHTTP(t *testing.T) (*env, *httptest.Server) {
	t.Helper()
	e := newEnv(t)
	h := e.server.HTTPHandler(mcp.HTTPOptions{Auth: consent.NewAuthenticator(e.control, nil), MaxRequestBytes: 1 << 20})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return e, srv
}

func TestHTTPAuthentication(t *testing.T) {
	e, srv := newHTTP(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		message string
	}{
		{"no key", nil, 401, "API key required"},
		{"another scheme", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, 401, "invalid API key format"},
		{"too short", map[string]string{"Authorization": "Bearer short"}, 401, "invalid API key format"},
		{"unknown key", map[string]string{"Authorization": "Bearer cairn_sk_0000000000000000000000000000000000000000000"}, 401, "unknown API key"},
		{"bearer key", map[string]string{"Authorization": "Bearer " + e.key}, 200, ""},
		{"X-API-Key", map[string]string{"X-API-Key": e.key}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 401 {
				return
			}
			var env mcp.Envelope
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatal(err)
			}
			if env.Error.Code != mcp.CodeUnauthorized || !strings.Contains(env.Error.Message, tt.message) || env.Error.TraceID == "" {
				t.Errorf("envelope = %+v, want UNAUTHORIZED saying %q", env.Error, tt.message)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate header")
			}
		})
	}
}

// TestHTTPRejectsOversizedBodies sends a body twice the limit and reads
// the answer while it writes, on a raw connection: the server answers 413
// without reading the rest and closes, so a client that only reads once it
// has written everything (net/http's, on a loaded machine) may see the
// reset instead of the answer.
func TestHTTPRejectsOversizedBodies(t *testing.T) {
	e, srv := newHTTP(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := strings.Repeat(" ", 2<<20)
	go func() {
		// Write errors are expected: the server may close before the
		// whole body is sent.
		_, _ = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			strings.TrimPrefix(srv.URL, "http://"), e.key, len(body))
		_, _ = io.WriteString(conn, body)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env mcp.Envelope
	_ = json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || env.Error.Code != mcp.CodeRequestTooLarge {
		t.Errorf("status %d, envelope %+v; want 413 REQUEST_TOO_LARGE", resp.StatusCode, env.Error)
	}
}

func TestHTTPHealth(t *testing.T) {
	_, srv := newHTTP(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d, want 200", path, resp.StatusCode)
		}
	}
}

// TestHTTPClientSession drives the handler with the SDK's Streamable HTTP
// client: the tools it lists and a store it makes come back as structured
// content.
func TestHTTPClientSession(t *testing.T) {
	e, srv := newHTTP(t)
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{e.key}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(e.server.Tools()) {
		t.Errorf("listed %d tools, want %d", len(tools.Tools), len(e.server.Tools()))
	}
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "store", Arguments: map[string]any{
		"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("store: %v %+v", err, res)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if id, _ := out["source_id"].(string); !strings.HasPrefix(id, "src_") {
		t.Errorf("structured content = %v, want a source_id", res.StructuredContent)
	}
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}
