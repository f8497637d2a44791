package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/console"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/migrations"
)

type principalKey struct{}

// fixture is the owner API over a fresh embedded control plane, with the
// owner and one other agent of the owner's user.
type fixture struct {
	store *controlplane.Store
	api   http.Handler
	owner consent.Principal
	agent consent.Principal
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := sqlitetest.Open(t)
	s := controlplane.New(db.Write, migrations.SQLite)
	b, err := s.EnsureOwner(t.Context(), "owner", consent.HashKey("owner-key-0123456789abcdef0123456789"), "owner-ke")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	owner.KeyID = b.KeyID
	if _, err := s.CreateAgent(t.Context(), owner.UserID, "claude"); err != nil {
		t.Fatal(err)
	}
	agent, err := s.AgentPrincipal(t.Context(), owner.UserName, "claude")
	if err != nil {
		t.Fatal(err)
	}
	api := console.API(console.APIOptions{Store: s, Principal: func(ctx context.Context) (consent.Principal, bool) {
		p, ok := ctx.Value(principalKey{}).(consent.Principal)
		return p, ok
	}})
	return fixture{store: s, api: api, owner: owner, agent: agent}
}

// do sends a request as p (nil: unauthenticated) and decodes the answer.
func (f fixture) do(t *testing.T, p *consent.Principal, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	r := httptest.NewRequestWithContext(t.Context(), method, path, &buf)
	if p != nil {
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, *p))
	}
	w := httptest.NewRecorder()
	f.api.ServeHTTP(w, r)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: not JSON: %q", method, path, w.Body.String())
	}
	return w.Code, out
}

// ownerRoutes are every route of the owner API, with a body each accepts.
var ownerRoutes = []struct {
	method, path string
	body         any
}{
	{"GET", "/console/api/agents", nil},
	{"POST", "/console/api/agents", map[string]any{"name": "intruder"}},
	{"POST", "/console/api/keys", map[string]any{"agent": "claude"}},
	{"POST", "/console/api/keys/key_any/revoke", map[string]any{}},
	{"POST", "/console/api/consent/preview", map[string]any{"agent": "claude", "resource": "*", "action": "read", "effect": "allow"}},
}

func TestOwnerRoutesRefuseOtherKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, rt := range ownerRoutes {
		code, out := f.do(t, &f.agent, rt.method, rt.path, rt.body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusForbidden || e["code"] != "FORBIDDEN" || !strings.HasPrefix(e["trace_id"].(string), "trace_") {
			t.Errorf("%s %s as agent claude: %d %v, want 403 FORBIDDEN with a trace id", rt.method, rt.path, code, out)
		}
		if code, _ := f.do(t, nil, rt.method, rt.path, rt.body); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a principal: %d, want 401", rt.method, rt.path, code)
		}
	}
	// Nothing the refused calls asked for happened.
	agents, err := f.store.ListAgents(t.Context(), f.owner.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 {
		t.Errorf("agents after refused calls: %v, want owner and claude only", agents)
	}
	keys, err := f.store.ListKeys(t.Context(), controlplane.KeyFilter{UserID: f.owner.UserID})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !keys[0].RevokedAt.IsZero() {
		t.Errorf("keys after refused calls: %+v, want the owner's, not revoked", keys)
	}
	// The session route answers any key, and says it is not the owner.
	code, out := f.do(t, &f.agent, "GET", "/console/api/session", nil)
	if code != http.StatusOK || out["owner"] != false || out["agent"] != "claude" {
		t.Errorf("session as claude: %d %v", code, out)
	}
}

func TestAgentsAndKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := f.do(t, &f.owner, "POST", "/console/api/agents", map[string]any{"name": "cursor"})
	if code != http.StatusCreated {
		t.Fatalf("create agent: %d %v", code, out)
	}
	if code, out := f.do(t, &f.owner, "POST", "/console/api/agents", map[string]any{"name": "cursor"}); code != http.StatusConflict {
		t.Errorf("create the same agent again: %d %v, want 409", code, out)
	}
	if code, out := f.do(t, &f.owner, "POST", "/console/api/agents", map[string]any{"name": "a b"}); code != http.StatusBadRequest {
		t.Errorf("create an agent with a space in its name: %d %v, want 400", code, out)
	}
	code, out = f.do(t, &f.owner, "POST", "/console/api/keys", map[string]any{"agent": "cursor", "expires_in_days": 30})
	if code != http.StatusCreated {
		t.Fatalf("create key: %d %v", code, out)
	}
	key := out["key"].(string)
	rec := out["record"].(map[string]any)
	// The key authenticates as the new agent.
	_, p, err := f.store.KeyByHash(t.Context(), consent.HashKey(key))
	if err != nil || p.AgentName != "cursor" {
		t.Fatalf("the new key: %v %+v", err, p)
	}
	if code, out := f.do(t, &f.owner, "POST", "/console/api/keys", map[string]any{"agent": "nobody"}); code != http.StatusNotFound {
		t.Errorf("a key for a missing agent: %d %v, want 404", code, out)
	}
	if code, out := f.do(t, &f.owner, "POST", "/console/api/keys", map[string]any{"agent": "cursor", "key": "chosen"}); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d %v, want 400", code, out)
	}

	code, out = f.do(t, &f.owner, "GET", "/console/api/agents", nil)
	if code != http.StatusOK {
		t.Fatalf("list: %d %v", code, out)
	}
	var listed []string
	for _, a := range out["agents"].([]any) {
		a := a.(map[string]any)
		for _, k := range a["keys"].([]any) {
			k := k.(map[string]any)
			listed = append(listed, a["name"].(string)+":"+k["status"].(string))
			if strings.Contains(k["prefix"].(string), key[10:]) {
				t.Errorf("a listing shows more of the key than its prefix: %v", k)
			}
		}
	}
	if diff := cmp.Diff([]string{"cursor:active", "owner:active"}, listed); diff != "" {
		t.Errorf("agents and keys (-want +got):\n%s", diff)
	}

	if code, out := f.do(t, &f.owner, "POST", "/console/api/keys/"+rec["id"].(string)+"/revoke", map[string]any{}); code != http.StatusOK || out["record"].(map[string]any)["status"] != "revoked" {
		t.Errorf("revoke: %d %v", code, out)
	}
	if _, err := consent.NewAuthenticator(f.store, nil).Authenticate(t.Context(), key); err == nil {
		t.Error("a revoked key still authenticates")
	}
	if code, _ := f.do(t, &f.owner, "POST", "/console/api/keys/key_nope/revoke", map[string]any{}); code != http.StatusNotFound {
		t.Errorf("revoke a missing key: %d, want 404", code)
	}
	if code, out := f.do(t, &f.owner, "POST", "/console/api/keys/"+f.owner.KeyID+"/revoke", map[string]any{}); code != http.StatusBadRequest {
		t.Errorf("revoke the key of the session: %d %v, want 400", code, out)
	}
}

func TestConsentPreview(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, r := range []consent.Rule{
		{Pattern: "entities/*", Action: consent.Read, Effect: consent.Allow},
		{Pattern: "graph", Action: consent.Read, Effect: consent.Allow},
	} {
		r.UserID, r.AgentID = f.owner.UserID, f.agent.AgentID
		if _, err := f.store.SetRule(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	code, out := f.do(t, &f.owner, "POST", "/console/api/consent/preview", map[string]any{"agent": "claude", "resource": "tables/invoice",
		"action": "read", "effect": "deny", "resources": []string{"entities/invoice", "entities/person", "vectors/notes"}})
	if code != http.StatusOK {
		t.Fatalf("preview: %d %v", code, out)
	}
	got := map[string]string{}
	for _, d := range out["decisions"].([]any) {
		d := d.(map[string]any)
		got[d["resource"].(string)] = d["now"].(string) + "→" + d["then"].(string)
	}
	want := map[string]string{
		"profile": "deny→deny", "graph": "allow→allow", "sources": "deny→deny", "schema": "deny→deny",
		"entities/invoice": "allow→deny", "entities/person": "allow→allow", "memories/notes": "deny→deny",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// A preview changes nothing.
	rules, err := f.store.ListRules(t.Context(), f.owner.UserID, f.agent.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 {
		t.Errorf("rules after a preview: %+v", rules)
	}
	for _, bad := range []map[string]any{
		{"agent": "claude", "resource": "entities/", "action": "read", "effect": "deny"},
		{"agent": "claude", "resource": "graph", "action": "erase", "effect": "deny"},
		{"agent": "claude", "resource": "graph", "action": "read", "effect": "maybe"},
	} {
		if code, out := f.do(t, &f.owner, "POST", "/console/api/consent/preview", bad); code != http.StatusBadRequest {
			t.Errorf("preview %v: %d %v, want 400", bad, code, out)
		}
	}
	// delete is an action of its own (issue 37): previewed like the others.
	if code, out := f.do(t, &f.owner, "POST", "/console/api/consent/preview",
		map[string]any{"agent": "claude", "resource": "memories/*", "action": "delete", "effect": "allow"}); code != http.StatusOK || out["action"] != "delete" {
		t.Errorf("preview of a delete rule: %d %v, want 200", code, out)
	}
	if code, _ := f.do(t, &f.owner, "POST", "/console/api/consent/preview", map[string]any{"agent": "nobody", "resource": "graph", "action": "read", "effect": "deny"}); code != http.StatusNotFound {
		t.Errorf("preview for a missing agent: %d, want 404", code)
	}
	// The owner agent is allowed everything whatever its rules.
	code, out = f.do(t, &f.owner, "POST", "/console/api/consent/preview", map[string]any{"agent": "owner", "resource": "*", "action": "read", "effect": "deny"})
	if code != http.StatusOK || out["owner_agent"] != true {
		t.Fatalf("preview for the owner agent: %d %v", code, out)
	}
	for _, d := range out["decisions"].([]any) {
		if d := d.(map[string]any); d["then"] != "allow" {
			t.Errorf("the owner agent would be denied %v", d)
		}
	}
}
