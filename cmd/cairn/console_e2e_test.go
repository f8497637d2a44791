package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The console's tests against the built binary: its HTTP surface (who may
// reach what), and the browser scenario of console/web/e2e/console.mjs,
// which playwright-core runs in Debian's Chromium.

// consoleClient calls a running serve with one key.
type consoleClient struct {
	t    *testing.T
	base string
	key  string
}

// do sends a JSON request and decodes the JSON answer into out (when not
// nil); it returns the status.
func (c consoleClient) do(method, path string, body, out any) int {
	c.t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			c.t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, &buf)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			c.t.Fatalf("%s %s: %d, not JSON: %v", method, path, res.StatusCode, err)
		}
	}
	return res.StatusCode
}

// tool runs a tool through the REST facade and fails the test unless it
// succeeds.
func (c consoleClient) tool(name string, args any) map[string]any {
	c.t.Helper()
	var out struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
		Error   map[string]any `json:"error"`
	}
	if code := c.do("POST", "/mcp/call/"+name, args, &out); code != http.StatusOK || !out.Success {
		c.t.Fatalf("%s: %d %v", name, code, out.Error)
	}
	return out.Result
}

// consoleWorld is a serve with generated data: people, companies and
// invoices linked by relationships, a correction, a merge, memories (one
// of them contradicting a field), and an agent
// whose key may read entities, memories, the graph, sources and the
// profile. The agent and its key are made through the console's owner API.
type consoleWorld struct {
	base      string
	owner     consoleClient
	agent     consoleClient
	agentName string
	companyID string
}

func newConsoleWorld(t *testing.T, env ...string) consoleWorld {
	t.Helper()
	base := strings.TrimSuffix(startServe(t, filepath.Join(t.TempDir(), "data"), env...), "/mcp")
	owner := consoleClient{t: t, base: base, key: testOwnerKey}
	w := consoleWorld{base: base, owner: owner, agentName: "claude"}

	stored := owner.tool("store", map[string]any{"entities": []map[string]any{
		{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
		{"entity_type": "person", "name": "Charles Babbage", "email": "charles@example.com"},
		{"entity_type": "company", "name": "Analytical Engines Ltd", "industry": "computing"},
		{"entity_type": "company", "name": "Difference Works", "industry": "engineering"},
		{"entity_type": "invoice", "invoice_number": "INV-1001", "amount": 1200, "currency": "GBP", "issue_date": "2026-01-05"},
		{"entity_type": "invoice", "invoice_number": "INV-1002", "amount": 80, "currency": "GBP", "issue_date": "2026-02-11"},
		{"entity_type": "person", "name": "Ada King", "phone": "+44 20 7946 0018"},
	}})
	ids := map[string]string{}
	for i, e := range stored["entities"].([]any) {
		ids[[]string{"ada", "charles", "engines", "works", "inv1", "inv2", "king"}[i]] = e.(map[string]any)["entity_id"].(string)
	}
	w.companyID = ids["engines"]
	for _, r := range [][3]string{
		{"PART_OF", "ada", "engines"}, {"PART_OF", "charles", "works"}, {"REFERS_TO", "inv1", "engines"},
		{"REFERS_TO", "inv2", "works"}, {"DEPENDS_ON", "engines", "works"},
	} {
		owner.tool("create_relationship", map[string]any{"relationship_type": r[0], "source_entity_id": ids[r[1]], "target_entity_id": ids[r[2]]})
	}
	owner.tool("correct", map[string]any{"entity_id": ids["ada"], "entity_type": "person", "field": "name", "value": "Ada Lovelace"})
	owner.tool("merge_entities", map[string]any{"from_entity_id": ids["king"], "to_entity_id": ids["ada"], "merge_reason": "the same person"})
	for _, m := range []map[string]any{
		{"collection": "notes", "text": "Ada prefers green tea in the morning and no meetings before ten.", "tags": []string{"preference"}, "entity_ids": []string{ids["ada"]}},
		{"collection": "notes", "text": "Charles is rebuilding the difference engine's second prototype.", "entity_ids": []string{ids["charles"]}},
		{"collection": "notes", "text": "Invoice INV-1001 is due at the end of the quarter."},
		// A claim that disagrees with Charles's email: a contradiction to review.
		{"collection": "notes", "text": "Charles writes from charles@engine.example now.",
			"claims": []map[string]any{{"entity_id": ids["charles"], "field": "email", "value": "charles@engine.example"}}},
	} {
		owner.tool("save_memory", m)
	}

	// The agent and its key, through the owner API.
	if code := owner.do("POST", "/console/api/agents", map[string]any{"name": w.agentName}, nil); code != http.StatusCreated {
		t.Fatalf("create agent through the console API: %d", code)
	}
	var key struct {
		Key string `json:"key"`
	}
	if code := owner.do("POST", "/console/api/keys", map[string]any{"agent": w.agentName, "expires_in_days": 1}, &key); code != http.StatusCreated || key.Key == "" {
		t.Fatalf("create key through the console API: %d", code)
	}
	for _, res := range []string{"entities/*", "memories/*", "graph", "sources", "profile"} {
		owner.tool("set_consent_rule", map[string]any{"agent": w.agentName, "resource": res, "action": "read", "effect": "allow"})
	}
	w.agent = consoleClient{t: t, base: base, key: key.Key}
	return w
}

func TestConsoleHTTP(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)

	// / redirects to the console, whose page needs no key and carries the
	// policy.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(w.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
		t.Errorf("GET /: %d Location %q, want 302 to /console/", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = http.Get(w.base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("GET /console/: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}

	// The owner API: 401 without a key or with a bad one, 403 for an
	// agent's key whatever its rules, 200 for the owner's.
	anonymous := consoleClient{t: t, base: w.base}
	wrong := consoleClient{t: t, base: w.base, key: "cairn_sk_not-a-key-0123456789abcdefghijklmnopqrstu"}
	for _, rt := range []struct{ method, path string }{
		{"GET", "/console/api/agents"}, {"POST", "/console/api/agents"}, {"POST", "/console/api/keys"},
		{"POST", "/console/api/keys/key_x/revoke"}, {"POST", "/console/api/consent/preview"},
	} {
		body := map[string]any{}
		if code := anonymous.do(rt.method, rt.path, body, nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a key: %d, want 401", rt.method, rt.path, code)
		}
		if code := wrong.do(rt.method, rt.path, body, nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s with an unknown key: %d, want 401", rt.method, rt.path, code)
		}
		var e struct {
			Error struct {
				Code    string `json:"code"`
				TraceID string `json:"trace_id"`
			} `json:"error"`
		}
		if code := w.agent.do(rt.method, rt.path, body, &e); code != http.StatusForbidden || e.Error.Code != "FORBIDDEN" || e.Error.TraceID == "" {
			t.Errorf("%s %s with the agent's key: %d %+v, want 403 FORBIDDEN with a trace id", rt.method, rt.path, code, e)
		}
	}
	// The owner tools the owner views use refuse the agent too.
	for _, tool := range []string{"list_consent_rules", "set_consent_rule", "query_audit_log", "delete_consent_rule"} {
		var out struct {
			Success bool `json:"success"`
		}
		if code := w.agent.do("POST", "/mcp/call/"+tool, map[string]any{"agent": w.agentName, "resource": "*", "action": "read", "effect": "allow", "rule_id": "rule_x"}, &out); out.Success || code == http.StatusOK {
			t.Errorf("%s with the agent's key: %d, want a refusal", tool, code)
		}
	}
	var session struct {
		Agent string `json:"agent"`
		Owner bool   `json:"owner"`
	}
	if code := w.agent.do("GET", "/console/api/session", nil, &session); code != http.StatusOK || session.Agent != w.agentName || session.Owner {
		t.Errorf("session of the agent's key: %d %+v", code, session)
	}
	// A key in the URL is not a key: the console never sends one there,
	// and the service does not take one from there.
	res, err = http.Get(w.base + "/console/api/session?key=" + testOwnerKey)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /console/api/session?key=…: %d, want 401", res.StatusCode)
	}
	var agents struct {
		Agents []struct {
			Name string `json:"name"`
		} `json:"agents"`
	}
	if code := w.owner.do("GET", "/console/api/agents", nil, &agents); code != http.StatusOK || len(agents.Agents) != 2 {
		t.Errorf("agents as the owner: %d %+v", code, agents)
	}
	// The owner's changes through the console are audited.
	audit := w.owner.tool("query_audit_log", map[string]any{"tool": "console.create_key"})
	if n := len(audit["records"].([]any)); n != 1 {
		t.Errorf("audit records of console.create_key: %d, want 1", n)
	}
}

// chromiumPath is the browser the console's test drives.
func chromiumPath() string {
	if p := os.Getenv("CAIRN_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// screenshotDir is where a browser scenario saves its screenshots:
// CAIRN_CONSOLE_ARTIFACTS when set, else a temporary folder, removed unless
// the test fails (then kept, to be looked at).
func screenshotDir(t *testing.T, prefix string) string {
	t.Helper()
	if out := os.Getenv("CAIRN_CONSOLE_ARTIFACTS"); out != "" {
		return out
	}
	out, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(out)
		}
	})
	return out
}

// skipOrFail skips the test with one line, or fails it under CI=true,
// where everything the suite needs must be provisioned.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(root, "console", "web")
	if _, err := os.Stat(filepath.Join(root, "console", "dist", "app", "index.html")); err != nil {
		skipOrFail(t, "the console is not built: run scripts/build-console.sh")
	}
	if _, err := os.Stat(filepath.Join(web, "node_modules", "playwright-core", "package.json")); err != nil {
		skipOrFail(t, "playwright-core is not installed: run scripts/build-console.sh")
	}
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(t, "node is not installed")
	}
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		skipOrFail(t, chromium+" is missing: run scripts/provision-browser.sh")
	}
	// The embedded store, and the split deployment (the graph in Neo4j),
	// whose graph reads the console's views go through a driver of their
	// own; PostgreSQL's are the ones TestConsoleHTTP and the other
	// end-to-end scenarios cover.
	for _, b := range e2eBackends {
		if b.name == "Postgres" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			w := newConsoleWorld(t, b.env(t, false)...)

			out := screenshotDir(t, "cairn-console-e2e-")
			t.Logf("console screenshots in %s", out)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(web, "e2e", "console.mjs"))
			cmd.Dir = web
			cmd.Env = append(os.Environ(), "CAIRN_URL="+w.base, "OWNER_KEY="+testOwnerKey, "AGENT_KEY="+w.agent.key, "AGENT_NAME="+w.agentName,
				"COMPANY_ID="+w.companyID, "CHROMIUM="+chromium, "OUT_DIR="+out)
			output, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the browser scenario failed (%v); screenshots in %s:\n%s", err, out, output)
			}
			t.Logf("%s", bytes.TrimSpace(output))
		})
	}
}
