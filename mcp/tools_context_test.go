package mcp_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/migrations"
)

// newContextEnv is newEnv with the control plane as the profile and
// contradiction store, as cmd/cairn wires it.
func newContextEnv(t *testing.T) *env {
	t.Helper()
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := graph.NewStore(embedded.New(db))
	t.Cleanup(func() {
		g.Close()
		db.Close()
	})
	control := controlplane.New(db.Write, migrations.SQLite)
	key, err := consent.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control.EnsureOwner(t.Context(), "owner", consent.HashKey(key), consent.DisplayPrefix(key)); err != nil {
		t.Fatal(err)
	}
	owner, err := control.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	svc := knowledge.NewService(g, knowledge.NewRegistry(), knowledge.Options{Profiles: control, Contradictions: control.WithReader(db.Read)})
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: svc}, mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{server: srv, control: control, owner: owner, key: key}
}

func TestListEntityTypesVectorFallback(t *testing.T) {
	e := newEnv(t)
	out := e.mustCall(t, "list_entity_types", map[string]any{"keyword": "payments"})
	if out["search_method"] != "vector_semantic" {
		t.Fatalf("search_method = %v, want vector_semantic", out["search_method"])
	}
	types := out["entity_types"].([]any)
	if len(types) == 0 {
		t.Fatal("no types found")
	}
	first := types[0].(map[string]any)
	if first["entity_type"] != "invoice" || first["match_type"] != "vector" {
		t.Errorf("first = %v via %v, want invoice via vector", first["entity_type"], first["match_type"])
	}
	if score, ok := first["similarity_score"].(float64); !ok || score <= 0 || score > 1 {
		t.Errorf("similarity_score = %v, want in (0, 1]", first["similarity_score"])
	}
	out = e.mustCall(t, "list_entity_types", map[string]any{"keyword": "invoice"})
	if out["search_method"] != "keyword_exact" {
		t.Errorf("invoice: search_method = %v, want keyword_exact", out["search_method"])
	}
}

func TestUpdateProfileAndUserContext(t *testing.T) {
	e := newContextEnv(t)
	out := e.mustCall(t, "update_profile", map[string]any{
		"data":   map[string]any{"name": "Ada", "preferences": map[string]any{"dietary": []any{"vegetarian"}, "coffee": "black"}},
		"reason": "introduced herself",
	})
	out = e.mustCall(t, "update_profile", map[string]any{"data": map[string]any{"preferences": map[string]any{"coffee": nil}}, "reason": "stopped coffee"})
	prefs, _ := out["profile"].(map[string]any)["preferences"].(map[string]any)
	if _, has := prefs["coffee"]; has || prefs["dietary"] == nil || out["version"] != float64(2) {
		t.Errorf("profile after the null patch = %v (version %v)", out["profile"], out["version"])
	}
	change := out["change"].(map[string]any)
	if change["reason"] != "stopped coffee" || change["agent_id"] != e.owner.AgentName || change["changed_at"] == "" {
		t.Errorf("change = %v", change)
	}
	if _, merr := e.call(t, "update_profile", map[string]any{"reason": "no data"}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("update_profile without data: %v, want VALIDATION_ERROR", merr)
	}

	e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"},
		map[string]any{"entity_type": "person", "name": "Bob", "company": "Acme"},
	}})
	for _, budget := range []int{knowledge.MinContextBudget, knowledge.DefaultContextBudget} {
		raw, merr := e.server.Invoke(t.Context(), e.owner, "get_user_context", json.RawMessage(`{"budget_tokens":`+itoa(budget)+`,"topic":"anvils"}`))
		if merr != nil {
			t.Fatal(merr)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		// meta (added to every response by Handle) is outside the
		// context's budget; meta.bytes is the size of the rest.
		resultBytes := int(got["meta"].(map[string]any)["bytes"].(float64))
		if tokens := (resultBytes + 2) / 3; tokens > budget || float64(tokens) != got["tokens_used"] {
			t.Errorf("budget %d: the response is %d tokens, tokens_used says %v", budget, tokens, got["tokens_used"])
		}
		if budget == knowledge.DefaultContextBudget {
			ents := got["entities"].([]any)
			if len(ents) != 2 || ents[0].(map[string]any)["name"] != "Acme" {
				t.Errorf("entities = %v, want Acme first for the topic anvils", ents)
			}
			if got["profile"].(map[string]any)["name"] != "Ada" || got["memories"].(map[string]any)["available"] != false {
				t.Errorf("profile %v, memories %v", got["profile"], got["memories"])
			}
		}
	}
	// A real client checks the structured content against the output
	// schema.
	res, err := e.connect(t).CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "get_user_context", Arguments: map[string]any{"topic": "anvils"}})
	if err != nil || res.IsError {
		t.Fatalf("get_user_context through a client: %v %+v", err, res)
	}
	if _, merr := e.call(t, "get_user_context", map[string]any{"budget_tokens": 10}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("budget 10: %v, want VALIDATION_ERROR", merr)
	}
}

func TestReviewMemories(t *testing.T) {
	e := newContextEnv(t)
	e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"}}})
	e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme", "industry": "rockets"}}})
	list := e.mustCall(t, "review_memories", map[string]any{"action": "list"})
	cs, _ := list["contradictions"].([]any)
	if len(cs) != 1 {
		t.Fatalf("contradictions = %v, want one", list["contradictions"])
	}
	c := cs[0].(map[string]any)
	if c["field"] != "industry" || c["current_value"] != "anvils" || c["new_value"] != "rockets" || c["status"] != "open" {
		t.Errorf("contradiction = %v", c)
	}
	id := c["contradiction_id"].(string)
	for _, tt := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"no id", map[string]any{"action": "resolve", "resolution": "confirm"}, mcp.CodeValidation},
		{"no resolution", map[string]any{"action": "resolve", "contradiction_id": id}, mcp.CodeValidation},
		{"bad resolution", map[string]any{"action": "resolve", "contradiction_id": id, "resolution": "maybe"}, mcp.CodeValidation},
		{"bad action", map[string]any{"action": "delete"}, mcp.CodeValidation},
		{"unknown id", map[string]any{"action": "resolve", "contradiction_id": "ctr_nope", "resolution": "confirm"}, mcp.CodeNotFound},
	} {
		if _, merr := e.call(t, "review_memories", tt.args); merr == nil || merr.Body.Code != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, merr, tt.code)
		}
	}
	// Resolve through a real client session, with Epitome's metaId.
	cs2 := e.connect(t)
	res, err := cs2.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "review_memories", Arguments: map[string]any{
		"action": "resolve", "metaId": id, "resolution": "reject",
	}})
	if err != nil || res.IsError {
		t.Fatalf("resolve: %v %+v", err, res)
	}
	resolved := res.StructuredContent.(map[string]any)["resolved"].(map[string]any)
	if resolved["status"] != "resolved" || resolved["resolution"] != "reject" {
		t.Errorf("resolved = %v", resolved)
	}
	snap := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": c["entity_id"]})
	if got := snap["snapshot"].(map[string]any)["industry"]; got != "anvils" {
		t.Errorf("after reject, industry = %v, want anvils", got)
	}
	if _, merr := e.call(t, "review_memories", map[string]any{"action": "resolve", "contradiction_id": id, "resolution": "confirm"}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("resolving twice: %v, want VALIDATION_ERROR", merr)
	}
	if list := e.mustCall(t, "review_memories", map[string]any{"action": "list"}); len(list["contradictions"].([]any)) != 0 {
		t.Errorf("still open: %v", list["contradictions"])
	}
}

func TestContextToolsWithoutStores(t *testing.T) {
	e := newEnv(t) // no profile or contradiction store
	out := e.mustCall(t, "get_user_context", map[string]any{})
	if notes, _ := out["notes"].([]any); len(notes) == 0 {
		t.Errorf("the context does not say what is missing: %v", out)
	}
	for _, tool := range []string{"update_profile", "review_memories"} {
		args := map[string]any{"data": map[string]any{"a": 1}, "action": "list"}
		if tool == "review_memories" {
			delete(args, "data")
		} else {
			delete(args, "action")
		}
		if _, merr := e.call(t, tool, args); merr == nil || merr.Body.Code != mcp.CodeServiceUnavailable {
			t.Errorf("%s: %v, want SERVICE_UNAVAILABLE", tool, merr)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
