package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGuardBodyClearsDeadline checks that the read deadline ends with the
// body: a handler that answers for longer than the read timeout after
// reading the body (a tool call streaming over SSE) keeps its request
// context: the deadline bounds the body, not the answer.
func TestGuardBodyClearsDeadline(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, r = guardBody(w, r, timeout, mcpShape)
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(5 * timeout):
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
			http.Error(w, "request cancelled", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(resp.Body)
		t.Errorf("status %d %s, want 204: the handler lost its request after the read timeout", resp.StatusCode, msg)
	}
}
