package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// toolError runs a tool through the REST facade that must fail, and
// returns its status and error code.
func (c consoleClient) toolError(name string, args any) (int, string) {
	c.t.Helper()
	var out struct {
		Success bool `json:"success"`
		Error   struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	code := c.do("POST", "/mcp/call/"+name, args, &out)
	if out.Success {
		c.t.Errorf("%s succeeded, want an error", name)
	}
	return code, out.Error.Code
}

// TestConsoleErase is issue 37's proof for the console: after an entity and
// a memory are erased, none of the reads the console's views make (the
// graph's search, drawing and as-of drawing; the entity page's snapshot,
// provenance, observations, timeline and merge list; the memories' search
// and collection counts; the context preview; the consent view's counts;
// the contradictions) shows them, their id or a marker planted in them,
// and the audit view shows the erasures and none of their content. Each
// read is made first before the erasure, where it must show what it then
// must not. It calls the tools as the console's pages do, with the
// owner's key, over the REST facade of a built serve; the browser
// test (TestConsoleInBrowser) covers how the pages draw what they read.
func TestConsoleErase(t *testing.T) {
	t.Parallel()
	base := strings.TrimSuffix(startServe(t, filepath.Join(t.TempDir(), "data"), "CAIRN_TOOLSETS=default,forget"), "/mcp")
	owner := consoleClient{t: t, base: base, key: testOwnerKey}

	marker := "zqc" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "") + "q"
	stored := owner.tool("store", map[string]any{"entities": []map[string]any{
		{"entity_type": "person", "name": "Ann " + marker, "email": marker + "@example.org", "notes": "told in confidence " + marker, "birth_date": "1980-02-03"},
		{"entity_type": "company", "name": "Acme Tools", "industry": "tools"},
		{"entity_type": "person", "name": "Bob Stone", "email": "bob@example.org"},
	}})
	ents := stored["entities"].([]any)
	ann, acme, bob := ents[0].(map[string]any)["entity_id"].(string), ents[1].(map[string]any)["entity_id"].(string), ents[2].(map[string]any)["entity_id"].(string)
	owner.tool("create_relationship", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": ann, "target_entity_id": acme,
		"metadata": map[string]any{"note": marker}})
	owner.tool("create_relationship", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": bob, "target_entity_id": acme})
	// The memory about Ann claims another email: a contradiction to review.
	mem := owner.tool("save_memory", map[string]any{"collection": "notes", "text": "Ann " + marker + " keeps the spare key under the blue pot",
		"tags": []string{marker}, "entity_ids": []string{ann},
		"claims": []map[string]any{{"entity_id": ann, "field": "email", "value": "ann." + marker + "@elsewhere.example"}}})["id"].(string)
	owner.tool("save_memory", map[string]any{"collection": "notes", "text": "Bob Stone orders the tools on Mondays"})
	// A memory about Ann that is not erased: it stays, without her id.
	owner.tool("save_memory", map[string]any{"collection": "notes", "text": "She drinks green tea", "entity_ids": []string{ann}})
	time.Sleep(5 * time.Millisecond) // asOf is strictly after everything above
	asOf := time.Now().UTC().Format(time.RFC3339Nano)

	// views are the console's reads that show Ann or her memory; each
	// answer's JSON, with the answer's meta (its trace id) left out.
	type view struct {
		name, tool string
		args       map[string]any
		// gone is true for a read of Ann herself: after the erasure it
		// answers ENTITY_NOT_FOUND rather than leaving her out.
		gone bool
	}
	views := []view{
		{"graph: search", "retrieve_entities", map[string]any{"query": "Ann " + marker, "limit": 10}, false},
		{"graph: draw Ann", "retrieve_entity_snapshot", map[string]any{"entity_id": ann}, true},
		{"graph: draw Acme", "retrieve_related_entities", map[string]any{"entity_id": acme, "max_hops": 2, "include_entities": true}, false},
		{"graph: draw Acme as of before", "retrieve_related_entities", map[string]any{"entity_id": acme, "max_hops": 2, "include_entities": true, "at": asOf}, false},
		{"graph: draw Ann as of before", "retrieve_entity_snapshot", map[string]any{"entity_id": ann, "at": asOf}, true},
		{"entity: provenance", "retrieve_field_provenance", map[string]any{"entity_id": ann, "field": "email"}, true},
		{"entity: observations", "list_observations", map[string]any{"entity_id": ann, "limit": 100}, true},
		{"entity: timeline", "list_timeline_events", map[string]any{"entity_id": ann, "limit": 50}, false},
		{"entity: merged into it", "retrieve_entities", map[string]any{"entity_type": "person", "include_merged": true, "include_snapshots": false, "limit": 100}, false},
		{"memories: search", "search_memory", map[string]any{"collection": "notes", "query": "spare key blue pot"}, false},
		{"memories: keywords", "search_memory", map[string]any{"collection": "notes", "query": "", "keywords": marker}, false},
		{"memories: list", "search_memory", map[string]any{"collection": "notes", "query": ""}, false},
		{"memories: about Ann", "search_memory", map[string]any{"collection": "notes", "query": "", "entity_id": ann}, false},
		{"context", "get_user_context", map[string]any{"topic": "Ann", "budget_tokens": 2000}, false},
		{"consent: what the owner has", "get_user_context", map[string]any{"budget_tokens": 8000}, false},
		{"contradictions", "review_memories", map[string]any{"action": "list"}, false},
	}
	read := func(v view) string {
		t.Helper()
		out := owner.tool(v.tool, v.args)
		delete(out, "meta")
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	shows := func(s string) bool {
		return strings.Contains(s, ann) || strings.Contains(s, mem) || strings.Contains(s, marker)
	}
	for _, v := range views {
		if got := read(v); !shows(got) {
			t.Fatalf("before the erasure %s (%s) does not show Ann or her memory: %s", v.name, v.tool, got)
		}
	}
	// audit reads the whole audit log as the audit view pages through it
	// (Older records: the next page before the last record shown).
	audit := func() string {
		t.Helper()
		var all []any
		args := map[string]any{"limit": 50}
		for {
			recs, _ := owner.tool("query_audit_log", args)["records"].([]any)
			if len(recs) == 0 {
				break
			}
			all = append(all, recs...)
			args["before_id"] = recs[len(recs)-1].(map[string]any)["id"]
		}
		b, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a := audit(); strings.Contains(a, `"tool":"erase"`) || strings.Contains(a, `"tool":"delete_memory"`) || shows(a) {
		t.Fatalf("before the erasure the audit view shows an erasure or content: %s", a)
	}

	owner.tool("erase", map[string]any{"kind": "entity", "ids": []string{ann}, "reason": "data-protection request " + marker})
	owner.tool("delete_memory", map[string]any{"memory_ids": []string{mem}, "mode": "erase", "reason": "the user asked " + marker})

	for _, v := range views {
		if v.gone {
			if status, code := owner.toolError(v.tool, v.args); status != http.StatusNotFound || code != "ENTITY_NOT_FOUND" {
				t.Errorf("after the erasure %s (%s): %d %s, want 404 ENTITY_NOT_FOUND", v.name, v.tool, status, code)
			}
			continue
		}
		if got := read(v); shows(got) {
			t.Errorf("after the erasure %s (%s) still shows Ann or her memory: %s", v.name, v.tool, got)
		}
	}
	// What stays is still shown: the views above answer, not just empty.
	for name, want := range map[string][]string{"graph: draw Acme": {bob}, "memories: list": {"Bob Stone orders", "She drinks green tea"}} {
		i := slices.IndexFunc(views, func(v view) bool { return v.name == name })
		got := read(views[i])
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("after the erasure %s does not show %q: %s", name, w, got)
			}
		}
	}

	// The audit view: the erasures, allowed, with what they needed, and
	// none of their content (no id, no marker, not the reasons).
	var records []struct {
		Tool, Kind, Action, Resource, Decision string
	}
	a := audit()
	if err := json.Unmarshal([]byte(a), &records); err != nil {
		t.Fatal(err)
	}
	need := map[string]bool{"call erase": false, "consent erase delete entities/person": false,
		"call delete_memory": false, "consent delete_memory delete memories/notes": false}
	for _, r := range records {
		key := r.Kind + " " + r.Tool
		if r.Kind == "consent" {
			key += " " + r.Action + " " + r.Resource
		}
		if _, ok := need[key]; ok && r.Decision == "allow" {
			need[key] = true
		}
	}
	for k, ok := range need {
		if !ok {
			t.Errorf("the audit view has no allowed %s record: %s", k, a)
		}
	}
	if shows(a) {
		t.Errorf("the audit view shows the erased content or ids: %s", a)
	}
}
