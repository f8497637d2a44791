package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServeHTTPServerTimeouts checks the server's own timeouts: headers and
// idle connections are bounded, and nothing bounds a whole request, which
// would end SSE streams (the handler bounds bodies instead).
func TestServeHTTPServerTimeouts(t *testing.T) {
	srv := httpServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("ReadHeaderTimeout %v, IdleTimeout %v: both must be set", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: both must be 0 so SSE streams last", srv.ReadTimeout, srv.WriteTimeout)
	}
}

// TestServeHardening runs `cairn serve` with a small per-client connection
// limit and read timeout and checks that both, and the well-known
// document, reach the wire.
func TestServeHardening(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	mcpURL := startServe(t, t.TempDir(), "CAIRN_DATABASE_URL=", "CAIRN_MAX_CONNS_PER_CLIENT=2", "CAIRN_READ_TIMEOUT=300ms")
	u, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	const patience = 10 * time.Second

	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(patience))
		return conn, bufio.NewReader(conn)
	}

	// The first connection reads the metadata document, which needs no key
	// and names /mcp, and stays open.
	first, r := dial()
	_, _ = first.Write([]byte("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Resource string }
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || doc.Resource != mcpURL {
		t.Errorf("metadata: %d resource %q, want 200 %q", resp.StatusCode, doc.Resource, mcpURL)
	}

	// The second trickles a body with the key. While both are open, a
	// third connection is closed at once.
	second, trickled := dial()
	_, _ = second.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + testOwnerKey +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"))
	third, r := dial()
	_, _ = third.Write([]byte("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"))
	if resp, err := http.ReadResponse(r, nil); err == nil {
		resp.Body.Close()
		t.Errorf("a third connection was served (%d) with --max-conns-per-client 2", resp.StatusCode)
	}

	// The trickled body gets 408 once the read timeout passes.
	resp, err = http.ReadResponse(trickled, nil)
	if err != nil {
		t.Fatalf("trickled body: %v, want a 408", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "REQUEST_TIMEOUT") {
		t.Errorf("trickled body: %d %s, want 408 REQUEST_TIMEOUT", resp.StatusCode, body)
	}
}
