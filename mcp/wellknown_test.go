package mcp_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

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
