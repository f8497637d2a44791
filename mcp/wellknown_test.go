package mcp_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// TestHTTPProtectedResourceMetadata follows what an MCP client does on a
// 401: read resource_metadata from WWW-Authenticate, fetch it without a key,
// and learn the resource and how to send a token.
func TestHTTPProtectedResourceMetadata(t *testing.T) {
	_, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	resp, _ := post(t, srv.URL+"/mcp", initializeBody, nil)
	challenge := resp.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`^Bearer realm="cairn", resource_metadata="([^"]+)"$`).FindStringSubmatch(challenge)
	if resp.StatusCode != http.StatusUnauthorized || m == nil {
		t.Fatalf("%d with WWW-Authenticate %q, want 401 naming resource_metadata", resp.StatusCode, challenge)
	}
	if want := srv.URL + "/.well-known/oauth-protected-resource/mcp"; m[1] != want {
		t.Errorf("resource_metadata = %q, want %q", m[1], want)
	}
	for _, url := range []string{m[1], srv.URL + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s %v, want 200 JSON", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		want := map[string]any{
			"resource":                 srv.URL + "/mcp",
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "Cairn",
			"resource_documentation":   doc["resource_documentation"],
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s (-want +got):\n%s", url, diff)
		}
		if s, _ := doc["resource_documentation"].(string); s == "" {
			t.Errorf("%s: no resource_documentation saying how to get a key", url)
		}
	}
}

// fakeOAuth is an authorization server that knows one access token.
type fakeOAuth struct{ principal consent.Principal }

const goodToken = "ory_at_good-token-0123456789abcdefghijklmnop"

func (fakeOAuth) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "token endpoint") })
}
func (fakeOAuth) Paths() []string             { return []string{"/oauth/token"} }
func (fakeOAuth) Owns(token string) bool      { return strings.HasPrefix(token, "ory_at_") }
func (fakeOAuth) Issuer(*http.Request) string { return "https://cairn.example" }
func (fakeOAuth) Resource(*http.Request) string {
	return "https://cairn.example/mcp"
}
func (f fakeOAuth) Verify(_ *http.Request, token string) (consent.Principal, error) {
	if token != goodToken {
		return consent.Principal{}, errors.New("invalid, expired or revoked OAuth access token")
	}
	return f.principal, nil
}

// TestHTTPOAuthTokens: with an authorization server, the metadata lists
// it, its routes are served, its tokens reach the tools as the agent they
// stand for, and a 401 to one of its tokens says invalid_token and points
// at the metadata under the issuer.
func TestHTTPOAuthTokens(t *testing.T) {
	e := newEnv(t)
	agent, err := e.control.CreateAgent(t.Context(), e.owner.UserID, "oauth-host")
	if err != nil {
		t.Fatal(err)
	}
	p := consent.Principal{UserID: e.owner.UserID, UserName: e.owner.UserName, AgentID: agent.ID, AgentName: agent.Name, KeyID: "oac_1"}
	srv := httptest.NewServer(e.server.HTTPHandler(mcp.HTTPOptions{Auth: consent.NewAuthenticator(e.control, e.clock.Now), OAuth: fakeOAuth{p}}))
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if doc["resource"] != "https://cairn.example/mcp" || !cmp.Equal(doc["authorization_servers"], []any{"https://cairn.example"}) {
		t.Errorf("metadata: %v", doc)
	}
	resp, _ = post(t, srv.URL+"/oauth/token", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/oauth/token: %d", resp.StatusCode)
	}
	resp, _ = post(t, srv.URL+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer ory_at_revoked-0123456789abcdefghijklmnop"})
	if c := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized ||
		c != `Bearer realm="cairn", resource_metadata="https://cairn.example/.well-known/oauth-protected-resource/mcp", error="invalid_token"` {
		t.Errorf("unknown token: %d %q", resp.StatusCode, c)
	}
	// The agent has no rule: its call is refused by consent, as the
	// agent, not by authentication.
	resp, env := post(t, srv.URL+"/mcp/call/retrieve_entities", `{"entity_type":"person"}`, map[string]string{"Authorization": "Bearer " + goodToken})
	if resp.StatusCode == http.StatusUnauthorized {
		t.Errorf("good token: 401 %v", env)
	}
	recs, err := e.control.QueryAudit(t.Context(), consent.AuditQuery{UserID: e.owner.UserID, AgentName: "oauth-host"})
	if err != nil || len(recs) == 0 {
		t.Errorf("no audit record of the token's agent: %v %v", recs, err)
	}
}
