package mcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func newHTTPWith(t *testing.T, opts envOptions, httpOpts mcp.HTTPOptions) (*env, *httptest.Server) {
	t.Helper()
	e := newEnvWith(t, opts)
	if httpOpts.Auth == nil {
		httpOpts.Auth = consent.NewAuthenticator(e.control, e.clock.Now)
	}
	srv := httptest.NewServer(e.server.HTTPHandler(httpOpts))
	t.Cleanup(srv.Close)
	return e, srv
}

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, mcp.Envelope) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env mcp.Envelope
	if resp.Header.Get("Content-Type") == "application/json" && resp.StatusCode >= 400 {
		_ = json.NewDecoder(resp.Body).Decode(&env)
	}
	return resp, env
}

func TestHTTPKeyStates(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	ctx := t.Context()
	claude, err := e.control.CreateAgent(ctx, e.owner.UserID, "claude")
	if err != nil {
		t.Fatal(err)
	}
	revoked, k, err := e.control.CreateKey(ctx, e.owner.UserID, claude.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.control.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	// The authenticator's clock is the test's: this key is past its expiry.
	expired, _, err := e.control.CreateKey(ctx, e.owner.UserID, claude.ID, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(24 * 365 * time.Hour * 10)
	tests := []struct {
		name    string
		headers map[string]string
		message string
	}{
		{"missing", nil, "API key required"},
		{"malformed", map[string]string{"X-API-Key": "short"}, "invalid API key format"},
		{"unknown", map[string]string{"X-API-Key": "cairn_sk_0000000000000000000000000000000000000000000"}, "unknown API key"},
		{"revoked", map[string]string{"Authorization": "Bearer " + revoked}, "API key has been revoked"},
		{"expired", map[string]string{"Authorization": "Bearer " + expired}, "API key has expired"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		resp, env := post(t, srv.URL+"/mcp", initializeBody, tt.headers)
		if resp.StatusCode != 401 || env.Error.Code != mcp.CodeUnauthorized || !strings.Contains(env.Error.Message, tt.message) {
			t.Errorf("%s: %d %+v, want 401 saying %q", tt.name, resp.StatusCode, env.Error, tt.message)
		}
		if seen[env.Error.Message] {
			t.Errorf("%s: message %q is not distinct", tt.name, env.Error.Message)
		}
		seen[env.Error.Message] = true
	}
}

func TestHTTPAgentHeaderAndOrigin(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	auth := "Bearer " + e.key
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		code    string
	}{
		{"own agent", map[string]string{"Authorization": auth, "X-Agent-ID": consent.OwnerAgent}, 200, ""},
		{"another agent", map[string]string{"Authorization": auth, "X-Agent-ID": "claude"}, 403, mcp.CodeForbidden},
		{"no origin", map[string]string{"Authorization": auth}, 200, ""},
		{"loopback origin", map[string]string{"Authorization": auth, "Origin": "http://localhost:5173"}, 200, ""},
		{"allowed origin", map[string]string{"Authorization": auth, "Origin": "https://app.example.com"}, 200, ""},
		{"foreign origin", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, 403, mcp.CodeForbidden},
		{"foreign origin before auth", map[string]string{"Origin": "https://evil.example"}, 403, mcp.CodeForbidden},
	}
	for _, tt := range tests {
		resp, env := post(t, srv.URL+"/mcp", initializeBody, tt.headers)
		if resp.StatusCode != tt.status || env.Error.Code != tt.code {
			t.Errorf("%s: %d %+v, want %d %s", tt.name, resp.StatusCode, env.Error, tt.status, tt.code)
		}
	}
}

// TestHTTPRateLimit checks the limit with a fake clock: never more than the
// limit in a window, every 429 with Retry-After, headers on every response,
// and a retry after Retry-After succeeds.
func TestHTTPRateLimit(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 3}}, mcp.HTTPOptions{})
	headers := map[string]string{"Authorization": "Bearer " + e.key}
	for i := range 5 {
		resp, env := post(t, srv.URL+"/mcp", initializeBody, headers)
		if resp.Header.Get("X-RateLimit-Limit") != "3" || resp.Header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("call %d: headers %v", i, resp.Header)
		}
		remaining, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		if i < 3 {
			if resp.StatusCode != 200 || remaining != 2-i {
				t.Errorf("call %d: %d, remaining %d; want 200, %d", i, resp.StatusCode, remaining, 2-i)
			}
			continue
		}
		retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != 429 || env.Error.Code != mcp.CodeRateLimited || retry != 30 || env.Error.Details["retry_after_seconds"] != float64(30) {
			t.Errorf("call %d: %d %+v Retry-After %q; want 429 RATE_LIMIT_EXCEEDED after 30 s", i, resp.StatusCode, env.Error, resp.Header.Get("Retry-After"))
		}
	}
	e.clock.Add(30 * time.Second)
	if resp, _ := post(t, srv.URL+"/mcp", initializeBody, headers); resp.StatusCode != 200 {
		t.Errorf("after Retry-After: %d, want 200", resp.StatusCode)
	}
}

// TestHTTPRateLimitConcurrent sends many requests at once with two keys:
// each key gets exactly its limit.
func TestHTTPRateLimitConcurrent(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 10}}, mcp.HTTPOptions{})
	_, other := e.agent(t, e.owner.UserID, "claude")
	var mu sync.Mutex
	ok := map[string]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		key := e.key
		if i%2 == 1 {
			key = other
		}
		wg.Go(func() {
			resp, _ := post(t, srv.URL+"/mcp", initializeBody, map[string]string{"X-API-Key": key})
			if resp.StatusCode == 200 {
				mu.Lock()
				ok[key]++
				mu.Unlock()
			} else if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
				t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		})
	}
	wg.Wait()
	if ok[e.key] != 10 || ok[other] != 10 {
		t.Errorf("admitted %d and %d, want exactly 10 per key", ok[e.key], ok[other])
	}
}

// TestHTTPToolCallsCountOnce drives a real client session: a tool call is
// counted once (by the HTTP layer), in its tool's class, and a call over
// the limit comes back as the tool error RATE_LIMIT_EXCEEDED, with
// Retry-After on the HTTP response, and the session goes on.
func TestHTTPToolCallsCountOnce(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 100, consent.RateClassStore: 2}}, mcp.HTTPOptions{})
	rec := &recordingTransport{key: e.key}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	store := func() (*mcpsdk.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "store", Arguments: map[string]any{
			"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}}})
	}
	for i := range 2 {
		if res, err := store(); err != nil || res.IsError {
			t.Fatalf("store %d: %v %+v", i, err, res)
		}
		if got := rec.last("X-RateLimit-Remaining"); got != strconv.Itoa(1-i) {
			t.Errorf("after store %d: X-RateLimit-Remaining %q, want %d (counted once, in the store class)", i, got, 1-i)
		}
	}
	res, err := store()
	if err != nil {
		t.Fatalf("third store: %v", err)
	}
	if env := envelopeOf(t, res); env.Error.Code != mcp.CodeRateLimited || env.Error.Details["retry_after_seconds"] != float64(30) {
		t.Errorf("third store = %+v, want RATE_LIMIT_EXCEEDED with retry_after_seconds 30", env.Error)
	}
	if rec.last("Retry-After") != "30" {
		t.Errorf("Retry-After = %q, want 30", rec.last("Retry-After"))
	}
	// Other tools have their own class, and the session still works.
	if res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "retrieve_entities", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("retrieve_entities after the store limit: %v %+v", err, res)
	}
}

// recordingTransport adds the key and keeps the last response's headers.
type recordingTransport struct {
	key string
	mu  sync.Mutex
	h   http.Header
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.key)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		r.mu.Lock()
		r.h = resp.Header.Clone()
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recordingTransport) last(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.Get(name)
}

// TestInProcessRateLimit: transports without HTTP get RATE_LIMIT_EXCEEDED
// with retry_after_seconds from Handle.
func TestInProcessRateLimit(t *testing.T) {
	e := newEnvWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 1}})
	p, _ := e.agent(t, e.owner.UserID, "claude", [3]string{"read", "*", "allow"})
	if _, merr := e.callAs(t, p, "retrieve_entities", map[string]any{}); merr != nil {
		t.Fatal(merr)
	}
	_, merr := e.callAs(t, p, "retrieve_entities", map[string]any{})
	if merr == nil || merr.Body.Code != mcp.CodeRateLimited || merr.Body.Details["retry_after_seconds"] != 30 {
		t.Errorf("second call = %+v, want RATE_LIMIT_EXCEEDED with retry_after_seconds 30", merr)
	}
}
