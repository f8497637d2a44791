package mcp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cairnkg/cairn/mcp"
)

// TestHTTPRefusalClosesAtOnce: a refused request whose declared body never
// arrives has its connection closed right after the answer, whatever the
// length it declared. Below 256 KB net/http used to read the body when it
// closed it after the handler, so the connection stayed open until the
// read deadline (30 s by default; forever without one).
func TestHTTPRefusalClosesAtOnce(t *testing.T) {
	_, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	_, noDeadline := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{ReadTimeout: -1})
	tests := []struct {
		name   string
		addr   string
		path   string
		length int
	}{
		{"no key, 100000", srv.Listener.Addr().String(), "/mcp", 100000},
		{"no key, 10000000", srv.Listener.Addr().String(), "/mcp", 10000000},
		{"no key, REST, 100000", srv.Listener.Addr().String(), "/mcp/call/store", 100000},
		{"no key, no read timeout, 1000", noDeadline.Listener.Addr().String(), "/mcp", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", tt.path, tt.addr, tt.length)
			start := time.Now()
			_ = conn.SetReadDeadline(start.Add(patience))
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", resp.StatusCode)
			}
			_, err = r.ReadByte()
			took := time.Since(start)
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				t.Fatalf("the connection was still open %v after the answer", patience)
			case err != io.EOF && !errors.Is(err, net.ErrClosed):
				t.Logf("read after the answer: %v", err) // a reset also closes it
			}
			if took > 2*time.Second {
				t.Errorf("the connection closed %v after the request, want at once", took)
			}
		})
	}
}
