package mcp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// restCall posts to the REST facade and decodes Epitome's envelope.
func restCall(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v", method, url, err)
	}
	return resp, m
}

func TestREST(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 6}}, mcp.HTTPOptions{})
	owner := map[string]string{"Authorization": "Bearer " + e.key}
	_, agentKey := e.agent(t, e.owner.UserID, "claude")
	agent := map[string]string{"X-API-Key": agentKey}

	resp, m := restCall(t, "GET", srv.URL+"/mcp/tools", "", owner)
	if tools, _ := m["tools"].([]any); resp.StatusCode != 200 || len(tools) != len(e.server.Tools()) {
		t.Errorf("GET /mcp/tools = %d, %d tools; want %d", resp.StatusCode, len(tools), len(e.server.Tools()))
	} else if first := tools[0].(map[string]any); first["name"] == "" || first["inputSchema"] == nil || first["description"] == "" {
		t.Errorf("tool entry = %v", first)
	}

	resp, m = restCall(t, "POST", srv.URL+"/mcp/call/store", `{"entities":[{"entity_type":"company","name":"Acme"}]}`, owner)
	result, _ := m["result"].(map[string]any)
	if resp.StatusCode != 200 || m["success"] != true || result["source_id"] == nil || result["meta"] == nil {
		t.Errorf("store = %d %v", resp.StatusCode, m)
	}
	if resp.Header.Get("X-RateLimit-Limit") == "" {
		t.Error("no X-RateLimit-Limit on a REST response")
	}

	resp, m = restCall(t, "POST", srv.URL+"/mcp/call/no_such_tool", `{}`, owner)
	errBody, _ := m["error"].(map[string]any)
	details, _ := errBody["details"].(map[string]any)
	if resp.StatusCode != 404 || m["success"] != false || errBody["code"] != mcp.CodeUnknownTool || len(details["available_tools"].([]any)) != len(e.server.Tools()) {
		t.Errorf("unknown tool = %d %v; want 404 listing the tools", resp.StatusCode, m)
	}

	resp, m = restCall(t, "POST", srv.URL+"/mcp/call/list_relationships", `{}`, agent)
	if errBody, _ := m["error"].(map[string]any); resp.StatusCode != 403 || m["success"] != false || errBody["code"] != mcp.CodeConsentDenied ||
		!strings.Contains(errBody["message"].(string), "Agent 'claude' does not have read access to graph") {
		t.Errorf("no consent = %d %v; want 403 CONSENT_DENIED", resp.StatusCode, m)
	}

	resp, m = restCall(t, "POST", srv.URL+"/mcp/call/store", `{}`, nil)
	if resp.StatusCode != 401 || m["success"] != false {
		t.Errorf("no key = %d %v", resp.StatusCode, m)
	}

	// The limit is shared with the key's other requests in its class: the
	// listing and the unknown tool counted, so the fifth call here is the
	// seventh of the minute, over the 6 allowed.
	var last *http.Response
	for range 5 {
		last, m = restCall(t, "POST", srv.URL+"/mcp/call/retrieve_entities", `{}`, owner)
	}
	if errBody, _ := m["error"].(map[string]any); last.StatusCode != 429 || last.Header.Get("Retry-After") == "" || errBody["code"] != mcp.CodeRateLimited {
		t.Errorf("over the limit = %d %v, Retry-After %q", last.StatusCode, m, last.Header.Get("Retry-After"))
	}
}
