package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// cairnAdmin runs `cairn admin args…` with the built binary and returns its
// stdout; a non-zero exit fails the test unless wantFail.
func cairnAdmin(t *testing.T, env []string, wantFail bool, args ...string) string {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), append([]string{"admin"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if (err != nil) != wantFail {
		t.Fatalf("cairn admin %s: err %v, want failure %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, wantFail, stdout.String(), stderr.String())
	}
	if wantFail {
		return stderr.String()
	}
	return stdout.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestAdminEndToEnd manages an agent with the admin CLI while serve runs on
// the same store, and checks what the agent can do at each step, over HTTP
// and over stdio --agent.
func TestAdminEndToEnd(t *testing.T) {
	dir := t.TempDir()
	url := startServe(t, dir)
	owner := connectHTTP(t, url)
	callTool(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme Hidden Corp"},
		map[string]any{"entity_type": "person", "name": "Grace Hopper"},
	}})
	dd := []string{"--data-dir", dir}

	cairnAdmin(t, nil, false, append([]string{"agent", "create", "claude"}, dd...)...)
	out := cairnAdmin(t, nil, false, append([]string{"key", "create", "--agent", "claude", "--expires", "30d"}, dd...)...)
	key := lastLine(out)
	if !strings.HasPrefix(key, "cairn_sk_") || strings.Contains(key, " ") {
		t.Fatalf("key create's last line is %q, want the key alone", key)
	}

	claude := connectWithKey(t, url, key)
	res := callTool(t, claude, "retrieve_entities", map[string]any{})
	if n := len(res["entities"].([]any)); n != 0 {
		t.Errorf("claude without rules sees %d entities", n)
	}
	if e := callToolError(t, claude, "list_entity_types", map[string]any{}); e["code"] != "CONSENT_DENIED" {
		t.Errorf("list_entity_types without consent = %v", e)
	}

	// A rule added while serve runs applies to the next call.
	cairnAdmin(t, nil, false, append([]string{"consent", "allow", "--agent", "claude", "--resource", "tables/person", "--action", "read"}, dd...)...)
	res = callTool(t, claude, "retrieve_entities", map[string]any{})
	if ents := res["entities"].([]any); len(ents) != 1 || ents[0].(map[string]any)["entity_type"] != "person" {
		t.Errorf("claude with person read sees %v", ents)
	}
	rules := cairnAdmin(t, nil, false, append([]string{"consent", "list", "--agent", "claude"}, dd...)...)
	if !strings.Contains(rules, "entities/person") || !strings.Contains(rules, "allow") {
		t.Errorf("consent list = %s", rules)
	}
	if msg := cairnAdmin(t, nil, true, append([]string{"consent", "deny", "--agent", "claude", "--resource", "rows/x", "--action", "read"}, dd...)...); !strings.Contains(msg, "resource") {
		t.Errorf("bad pattern message = %s", msg)
	}

	// stdio --agent runs under the agent's rules.
	cmd := exec.Command(cairnBinary(t), "stdio", "--data-dir", dir, "--agent", "claude")
	cmd.Stderr = io.Discard
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-e2e", Version: "1"}, nil)
	stdio, err := client.Connect(t.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stdio.Close()
	res = callTool(t, stdio, "retrieve_entities", map[string]any{})
	if ents := res["entities"].([]any); len(ents) != 1 {
		t.Errorf("stdio --agent claude sees %d entities, want 1", len(ents))
	}
	if e := callToolError(t, stdio, "list_consent_rules", map[string]any{}); e["code"] != "FORBIDDEN" {
		t.Errorf("stdio --agent claude: owner-only tool = %v", e)
	}

	// The audit log has claude's calls and decisions, and no values. A
	// call is answered only once its records are durable, so they are all
	// there already.
	audit := cairnAdmin(t, nil, false, append([]string{"audit", "--agent", "claude", "--json", "--limit", "500"}, dd...)...)
	var calls, denials int
	for _, line := range strings.Split(strings.TrimSpace(audit), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r["kind"] == "call" {
			calls++
		}
		if r["decision"] == "deny" {
			denials++
		}
	}
	if calls < 5 || denials == 0 {
		t.Errorf("audit: %d calls and %d denials for claude; want ≥5 and some\n%s", calls, denials, audit)
	}
	for _, v := range []string{"Grace", "Acme"} {
		if strings.Contains(audit, v) {
			t.Errorf("the audit log holds the value %q", v)
		}
	}

	// Revoked: the next request is refused with the revoked message.
	keys := cairnAdmin(t, nil, false, append([]string{"key", "list", "--agent", "claude"}, dd...)...)
	fields := strings.Fields(lastLine(keys))
	cairnAdmin(t, nil, false, append([]string{"key", "revoke", fields[0]}, dd...)...)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), "revoked") {
		t.Errorf("revoked key: %d %s", resp.StatusCode, body)
	}
	if keys := cairnAdmin(t, nil, false, append([]string{"key", "list", "--agent", "claude"}, dd...)...); !strings.Contains(keys, "revoked") {
		t.Errorf("key list after revoke = %s", keys)
	}
}

// TestAdminPostgres runs admin commands against CAIRN_DATABASE_URL.
func TestAdminPostgres(t *testing.T) {
	env := []string{"CAIRN_DATABASE_URL=" + pgtest.URL(t)}
	dd := []string{"--data-dir", filepath.Join(t.TempDir(), "unused")}
	cairnAdmin(t, env, false, append([]string{"user", "create", "alice"}, dd...)...)
	cairnAdmin(t, env, false, append([]string{"agent", "create", "--user", "alice", "claude"}, dd...)...)
	key := lastLine(cairnAdmin(t, env, false, append([]string{"key", "create", "--user", "alice", "--agent", "claude"}, dd...)...))
	if !strings.HasPrefix(key, "cairn_sk_") {
		t.Errorf("key = %q", key)
	}
	cairnAdmin(t, env, false, append([]string{"consent", "allow", "--user", "alice", "--agent", "claude", "--resource", "graph", "--action", "read"}, dd...)...)
	if out := cairnAdmin(t, env, false, append([]string{"consent", "list", "--user", "alice"}, dd...)...); !strings.Contains(out, "graph") {
		t.Errorf("consent list on PostgreSQL = %s", out)
	}
	if out := cairnAdmin(t, env, false, append([]string{"user", "list"}, dd...)...); !strings.Contains(out, "alice") {
		t.Errorf("user list on PostgreSQL = %s", out)
	}
	if _, err := os.Stat(dd[1]); err == nil {
		t.Error("admin on PostgreSQL created the embedded store")
	}
}

func connectWithKey(t *testing.T, url, key string) *mcpsdk.ClientSession {
	t.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: keyTransport{key}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestRateLimitSharedByProcesses runs two serve processes on one store: a
// key's limit holds across both, because the counters live in the store.
func TestRateLimitSharedByProcesses(t *testing.T) {
	dir := t.TempDir()
	urls := []string{startServe(t, dir, "CAIRN_RATE_LIMIT=4"), startServe(t, dir, "CAIRN_RATE_LIMIT=4")}
	admitted := map[string]int{} // by window (X-RateLimit-Reset)
	for i := range 8 {
		base := strings.TrimSuffix(urls[i%2], "/mcp")
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp/call/retrieve_entities", strings.NewReader(`{}`))
		req.Header.Set("X-API-Key", testOwnerKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		window := resp.Header.Get("X-RateLimit-Reset")
		switch resp.StatusCode {
		case 200:
			admitted[window]++
		case 429:
			admitted[window] += 0 // the window exists, even with nothing admitted
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	for w, n := range admitted {
		if n > 4 {
			t.Errorf("window ending %s: two processes admitted %d calls, over the shared limit of 4", w, n)
		}
	}
	// Unless a minute boundary fell between the calls, the one window
	// admitted exactly the limit.
	if len(admitted) == 1 {
		for _, n := range admitted {
			if n != 4 {
				t.Errorf("admitted %d of 8 calls in one window, want 4", n)
			}
		}
	}
}
