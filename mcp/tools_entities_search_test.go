package mcp_test

import (
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

func names(out map[string]any) []string {
	var ns []string
	for _, x := range out["entities"].([]any) {
		ns = append(ns, x.(map[string]any)["canonical_name"].(string))
	}
	return ns
}

func TestRetrieveEntitiesQuery(t *testing.T) {
	e := newEnv(t)
	e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Quill Supplies", "industry": "stationery"},
		map[string]any{"entity_type": "person", "name": "Quill 004216", "email": "quill@acme.example"},
		map[string]any{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
	}})

	out := e.mustCall(t, "retrieve_entities", map[string]any{"query": "quill 004216"})
	ents := out["entities"].([]any)
	if len(ents) != 1 || out["total"].(float64) != 1 {
		t.Fatalf("quill 004216: %v", out)
	}
	hit := ents[0].(map[string]any)
	if hit["canonical_name"] != "Quill 004216" || hit["snapshot"] == nil {
		t.Errorf("hit = %v, want Quill 004216 with its snapshot", hit)
	}
	if _, ok := hit["score"].(float64); !ok {
		t.Errorf("hit has no score: %v", hit)
	}
	if m, _ := hit["matched"].([]any); len(m) != 1 || m[0] != "text" {
		t.Errorf("matched = %v, want [text]", hit["matched"])
	}

	// Email parts, prefix on the last word, best (a name match) first.
	out = e.mustCall(t, "retrieve_entities", map[string]any{"query": "acme"})
	if got := names(out); len(got) != 1 || got[0] != "Quill 004216" {
		t.Errorf("acme: %v", got)
	}
	out = e.mustCall(t, "retrieve_entities", map[string]any{"query": "qui", "entity_type": "company", "include_snapshots": false})
	ents = out["entities"].([]any)
	if got := names(out); len(got) != 1 || got[0] != "Quill Supplies" || ents[0].(map[string]any)["snapshot"] != nil {
		t.Errorf("qui companies without snapshots: %v", out)
	}

	// Without query the answer keeps its shape: no score, no matched.
	out = e.mustCall(t, "retrieve_entities", map[string]any{})
	for _, x := range out["entities"].([]any) {
		if _, ok := x.(map[string]any)["score"]; ok {
			t.Errorf("a listing has a score: %v", x)
		}
	}

	// Consent filters the search: a people-only agent finds no company,
	// and the total does not count it.
	people, _ := e.agent(t, e.owner.UserID, "people", [3]string{"read", "tables/person", "allow"})
	out, merr := e.callAs(t, people, "retrieve_entities", map[string]any{"query": "quill", "limit": 1})
	if merr != nil {
		t.Fatal(merr)
	}
	if got := names(out); len(got) != 1 || got[0] != "Quill 004216" || out["total"].(float64) != 1 {
		t.Errorf("people agent, quill: %v (total %v)", got, out["total"])
	}

	if _, merr := e.call(t, "retrieve_entities", map[string]any{"query": "?!"}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("a query without words = %+v, want VALIDATION_ERROR", merr)
	}
}
