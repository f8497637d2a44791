package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oauthReport is what testdata/node/oauth.mjs reports.
type oauthReport struct {
	ClientID            string   `json:"client_id"`
	AuthorizationURL    string   `json:"authorization_url"`
	Resource            string   `json:"resource"`
	CodeChallengeMethod string   `json:"code_challenge_method"`
	CallbackState       string   `json:"callback_state"`
	Tools               int      `json:"tools"`
	People              []string `json:"people"`
	Invoices            any      `json:"invoices"`
	WriteRefused        bool     `json:"write_refused"`
	AfterRefreshPeople  int      `json:"after_refresh_people"`
	Refreshed           bool     `json:"refreshed"`
	AfterDisconnect     string   `json:"after_disconnect"`
	RawAfterDisconnect  int      `json:"raw_after_disconnect"`
	RawChallenge        string   `json:"raw_challenge"`
	ConsentHeaders      struct {
		XFrameOptions string `json:"x_frame_options"`
		CSP           string `json:"csp"`
	} `json:"consent_headers"`
	Problems []string `json:"problems"`
}

// TestOAuthHostByURL connects the official TypeScript SDK's OAuth client
// to the built binary by URL alone: discovery from the 401, registration,
// the consent page approved in Chromium ("read everything but invoices"),
// the tools listed and only what was granted read, a refresh once the
// access token expired, and a 401 after the owner disconnects the client
// in the console. Screenshots of the consent page and of the owner view
// are kept in CAIRN_CONSOLE_ARTIFACTS when set.
func TestOAuthHostByURL(t *testing.T) {
	t.Parallel()
	dir := nodeClientDir(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	playwright := filepath.Join(root, "console", "web", "node_modules", "playwright-core", "index.mjs")
	if _, err := os.Stat(playwright); err != nil {
		skipOrFail(t, "playwright-core is not installed: run scripts/build-console.sh")
	}
	if _, err := os.Stat(filepath.Join(root, "console", "dist", "app", "index.html")); err != nil {
		skipOrFail(t, "the console is not built: run scripts/build-console.sh")
	}
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		skipOrFail(t, chromium+" is missing: run scripts/provision-browser.sh")
	}
	// Access tokens live 2 seconds, so that the scenario sees one expire
	// and refreshes it; it waits 3 seconds for that, and asserts no time.
	mcpURL := startServe(t, filepath.Join(t.TempDir(), "data"), "CAIRN_OAUTH_ACCESS_TOKEN_TTL=2s")
	owner := consoleClient{t: t, base: strings.TrimSuffix(mcpURL, "/mcp"), key: testOwnerKey}
	owner.tool("store", map[string]any{"entities": []map[string]any{
		{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
		{"entity_type": "invoice", "invoice_number": "INV-1001", "amount": 1200, "currency": "GBP", "issue_date": "2026-01-05"},
	}})

	out := screenshotDir(t, "cairn-oauth-e2e-")
	t.Logf("OAuth screenshots in %s", out)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "oauth.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_URL="+mcpURL, "OWNER_KEY="+testOwnerKey, "PLAYWRIGHT_CORE="+playwright,
		"CHROMIUM="+chromium, "OUT_DIR="+out, "EXPIRY_WAIT_MS=3000")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the OAuth scenario failed (%v); screenshots in %s:\n%s", err, out, stderr.Bytes())
	}
	var r oauthReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report %q: %v", stdout.Bytes(), err)
	}
	base, _ := url.Parse(mcpURL)
	checks := []struct {
		ok   bool
		what string
	}{
		{strings.HasPrefix(r.ClientID, "oac_"), "the client registered"},
		{r.AuthorizationURL == base.Scheme+"://"+base.Host+"/console/oauth/authorize", "the client was sent to the consent page"},
		{r.Resource == mcpURL, "the client asked for a token for this /mcp"},
		{r.CodeChallengeMethod == "S256", "PKCE S256"},
		{r.CallbackState == "e2e-state-0123456789", "state came back"},
		{r.ConsentHeaders.XFrameOptions == "DENY" && strings.Contains(r.ConsentHeaders.CSP, "frame-ancestors 'none'"), "the consent page cannot be framed"},
		{r.Tools > 0, "the tools were listed"},
		{len(r.People) == 1, "the person was read"},
		{r.Invoices == "refused" || r.Invoices == float64(0), "the invoices were not read"},
		{r.WriteRefused, "a write was refused"},
		{r.Refreshed && r.AfterRefreshPeople == 1, "the expired access token was refreshed"},
		{r.RawAfterDisconnect == 401 && strings.Contains(r.RawChallenge, `error="invalid_token"`) &&
			strings.Contains(r.RawChallenge, "/.well-known/oauth-protected-resource/mcp"), "the call after disconnecting got 401 pointing at the metadata"},
		{r.AfterDisconnect == "InvalidGrantError" || r.AfterDisconnect == "UnauthorizedError", "the SDK's refresh after disconnecting was refused"},
		{len(r.Problems) == 0, "the pages logged no error"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not so (report %+v)", c.what, r)
		}
	}
	// The grant, the refresh and the disconnection are in the audit log.
	for _, tool := range []string{"oauth.register", "oauth.authorize", "oauth.token.authorization_code", "oauth.token.refresh_token", "oauth.disconnect"} {
		audit := owner.tool("query_audit_log", map[string]any{"tool": tool})
		if len(audit["records"].([]any)) == 0 {
			t.Errorf("no audit record of %s", tool)
		}
	}
}
