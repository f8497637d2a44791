package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
)

// newContextEnv is newEnv with the control plane as the profile and
// contradiction store, as cmd/cairn wires it, and no memory store, on a
// fresh store of the backend.
func newContextEnv(t *testing.T, b storeBackend) *env {
	t.Helper()
	st := b.open(t)
	control := st.control
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
	svc := knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{Profiles: control, Contradictions: st.contradictions})
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
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newContextEnv(t, b)
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
	})
}

func TestReviewMemories(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newContextEnv(t, b)
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
	})
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

// contradictionIDs returns the ids of the open contradictions the
// principal lists.
func contradictionIDs(t *testing.T, e *env, p consent.Principal) []string {
	t.Helper()
	out, merr := e.callAs(t, p, "review_memories", map[string]any{"action": "list"})
	if merr != nil {
		t.Fatalf("review_memories list: %v", merr)
	}
	var ids []string
	for _, c := range out["contradictions"].([]any) {
		ids = append(ids, c.(map[string]any)["contradiction_id"].(string))
	}
	return ids
}

// TestMemoryClaims: a memory's claims raise contradictions that
// review_memories lists and resolves, on both backends.
func TestMemoryClaims(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{contextStores: true, backend: &b})
		out := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@old.example"},
		}})
		ada := out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
		claim := func(value string) map[string]any {
			return map[string]any{"collection": "notes", "text": "Ada's email is now " + value,
				"claims": []any{map[string]any{"entity_id": ada, "field": "email", "value": value}}}
		}

		saved := e.mustCall(t, "save_memory", claim("ada@new.example"))
		ids, _ := saved["contradiction_ids"].([]any)
		if len(ids) != 1 {
			t.Fatalf("save_memory = %v, want one contradiction id", saved)
		}
		list := e.mustCall(t, "review_memories", map[string]any{"action": "list"})
		c := list["contradictions"].([]any)[0].(map[string]any)
		if c["contradiction_id"] != ids[0] || c["new_from"] != "memory" || c["new_observation_id"] != saved["id"] ||
			c["current_value"] != "ada@old.example" || c["new_value"] != "ada@new.example" || c["entity_id"] != ada {
			t.Errorf("listed contradiction = %v", c)
		}
		if agree := e.mustCall(t, "save_memory", claim("ADA@old.example")); len(agree["contradiction_ids"].([]any)) != 0 {
			t.Errorf("an agreeing claim raised %v", agree["contradiction_ids"])
		}
		if plain := e.mustCall(t, "save_memory", map[string]any{"collection": "notes", "text": "no claims"}); plain["contradiction_ids"] == nil {
			t.Errorf("contradiction_ids missing without claims: %v", plain)
		}

		// An unknown field is a validation error naming it.
		_, merr := e.call(t, "save_memory", map[string]any{"collection": "notes", "text": "x",
			"claims": []any{map[string]any{"entity_id": ada, "field": "shoe_size", "value": "42"}}})
		if merr == nil || merr.Body.Code != mcp.CodeValidation || merr.Body.Details["field"] != "claims[0].field" {
			t.Errorf("unknown field: %+v, want VALIDATION_ERROR on claims[0].field", merr)
		}

		// Confirm, through a real client: the claimed value wins.
		cs := e.connect(t)
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "review_memories", Arguments: map[string]any{
			"action": "resolve", "contradiction_id": ids[0], "resolution": "confirm",
		}})
		if err != nil || res.IsError {
			t.Fatalf("confirm: %v %+v", err, res)
		}
		resolved := res.StructuredContent.(map[string]any)["resolved"].(map[string]any)
		if resolved["resolution"] != "confirm" || resolved["correction_observation_id"] == nil || resolved["new_observation_id"] != saved["id"] {
			t.Errorf("resolved = %v, want the correction and the memory named", resolved)
		}
		// The field now comes from that correction (whose source's
		// provenance names the memory: see the knowledge tests).
		prov := e.mustCall(t, "retrieve_field_provenance", map[string]any{"entity_id": ada, "field": "email"})
		obs, _ := prov["source_observation"].(map[string]any)
		if prov["value"] != "ada@new.example" || obs["id"] != resolved["correction_observation_id"] || obs["source_priority"] != 1000.0 {
			t.Errorf("email provenance after confirm = %v, want the claimed value from the correction", prov)
		}

		// Reject another claim: the entity is unchanged and it is closed.
		again := e.mustCall(t, "save_memory", claim("ada@third.example"))
		id := again["contradiction_ids"].([]any)[0].(string)
		e.mustCall(t, "review_memories", map[string]any{"action": "resolve", "contradiction_id": id, "resolution": "reject"})
		snap := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": ada})
		if got := snap["snapshot"].(map[string]any)["email"]; got != "ada@new.example" {
			t.Errorf("after reject, email = %v", got)
		}
		if open := contradictionIDs(t, e, e.owner); len(open) != 0 {
			t.Errorf("still open: %v", open)
		}
	})
}

// TestMemoryClaimsConsent: claims and their contradictions reveal nothing
// an agent may not read, and need memory write access.
func TestMemoryClaimsConsent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{contextStores: true, backend: &b})
		out := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"},
		}})
		acme := out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
		claim := func(entityID, field string) map[string]any {
			return map[string]any{"collection": "notes", "text": "a claim",
				"claims": []any{map[string]any{"entity_id": entityID, "field": field, "value": "rockets"}}}
		}

		// Without memory write access, no claim is made.
		reader, _ := e.agent(t, e.owner.UserID, "reader", [3]string{"read", "*", "allow"})
		if _, merr := e.callAs(t, reader, "save_memory", claim(acme, "industry")); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
			t.Errorf("claim without memory write: %v, want CONSENT_DENIED", merr)
		}
		if open := contradictionIDs(t, e, e.owner); len(open) != 0 {
			t.Errorf("a refused claim recorded %v", open)
		}

		// An agent that may write memories and people, but not read
		// companies, gets the same answer for Acme as for no entity at
		// all, whatever the field.
		peopleOnly, _ := e.agent(t, e.owner.UserID, "people", [3]string{"read", "entities/person", "allow"},
			[3]string{"write", "entities/person", "allow"}, [3]string{"write", "memories/*", "allow"}, [3]string{"read", "memories/*", "allow"})
		_, missing := e.callAs(t, peopleOnly, "save_memory", claim("ent_0123456789abcdef0123456789abcdef", "industry"))
		for _, field := range []string{"industry", "shoe_size"} {
			_, merr := e.callAs(t, peopleOnly, "save_memory", claim(acme, field))
			if merr == nil || missing == nil || merr.Body.Code != mcp.CodeEntityNotFound || merr.Body.Code != missing.Body.Code || merr.Status != missing.Status {
				t.Errorf("claim on an unreadable company (%s): %+v; a missing entity gives %+v", field, merr, missing)
				continue
			}
			if j, _ := json.Marshal(merr.Body); strings.Contains(string(j), "company") || strings.Contains(string(j), "anvils") {
				t.Errorf("the refusal reveals the entity: %s", j)
			}
		}

		// The owner's claim about Acme is invisible to that agent in
		// review_memories, and cannot be resolved by it.
		saved := e.mustCall(t, "save_memory", claim(acme, "industry"))
		id := saved["contradiction_ids"].([]any)[0].(string)
		if open := contradictionIDs(t, e, peopleOnly); len(open) != 0 {
			t.Errorf("an agent that may not read companies lists %v", open)
		}
		_, merr := e.callAs(t, peopleOnly, "review_memories", map[string]any{"action": "resolve", "contradiction_id": id, "resolution": "confirm"})
		if merr == nil || merr.Body.Code != mcp.CodeNotFound {
			t.Errorf("resolve by an agent that may not read companies: %+v, want NOT_FOUND", merr)
		} else if j, _ := json.Marshal(merr.Body); strings.Contains(string(j), "anvils") || strings.Contains(string(j), "rockets") {
			t.Errorf("the refusal reveals the contradiction: %s", j)
		}
		if open := contradictionIDs(t, e, e.owner); len(open) != 1 || open[0] != id {
			t.Errorf("the owner's open contradictions = %v, want %s still open", open, id)
		}

		// A claim about a person, seen by an agent that may read people
		// but not memories: the claimed value, not the memory's id.
		out = e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@old.example"}}})
		ada := out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
		saved = e.mustCall(t, "save_memory", map[string]any{"collection": "private", "text": "Ada's secret address",
			"claims": []any{map[string]any{"entity_id": ada, "field": "email", "value": "ada@new.example"}}})
		peopleReader, _ := e.agent(t, e.owner.UserID, "people-reader", [3]string{"read", "entities/person", "allow"})
		list, merr := e.callAs(t, peopleReader, "review_memories", map[string]any{"action": "list"})
		if merr != nil {
			t.Fatal(merr)
		}
		cs := list["contradictions"].([]any)
		if len(cs) != 1 {
			t.Fatalf("the people reader lists %v, want the claim about Ada", cs)
		}
		c := cs[0].(map[string]any)
		if c["entity_id"] != ada || c["new_value"] != "ada@new.example" || c["new_from"] != "memory" || c["new_observation_id"] != "" {
			t.Errorf("the people reader sees %v, want the claim without its memory's id", c)
		}
		if j, _ := json.Marshal(list); strings.Contains(string(j), saved["id"].(string)) || strings.Contains(string(j), "secret") {
			t.Errorf("the list reveals the memory: %s", j)
		}
		// The owner, who may read the collection, sees the memory.
		list = e.mustCall(t, "review_memories", map[string]any{"action": "list"})
		if j, _ := json.Marshal(list); !strings.Contains(string(j), saved["id"].(string)) {
			t.Errorf("the owner's list does not name the memory: %s", j)
		}
	})
}
