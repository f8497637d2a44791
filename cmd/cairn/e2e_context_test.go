package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndContext drives the context tools through the built binary
// with a real MCP client, on the embedded store and on PostgreSQL: the
// user's context within a budget after storing entities and memories, the
// profile, and contradictions (from two sources, and from a memory's
// claim) listed and confirmed.
func TestEndToEndContext(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		cs := connectStdio(t, dataDir, env...)
		userContextScenario(t, cs)
		contradictionScenario(t, cs)
	})
}

// userContextScenario stores entities, memories and a profile, and loads
// the context within budgets large and small.
func userContextScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	var entities []any
	for i := range 30 {
		entities = append(entities, map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %02d", i),
			"title": strings.Repeat("engineer of long descriptions ", 3)})
	}
	entities = append(entities, map[string]any{"entity_type": "company", "name": "Globex", "industry": "chemicals"})
	callTool(t, cs, "store", map[string]any{"entities": entities})
	for i := range 12 {
		callTool(t, cs, "save_memory", map[string]any{"collection": "notes", "title": fmt.Sprintf("Note %02d", i),
			"text": strings.Repeat(fmt.Sprintf("note %d says something worth remembering. ", i), 10)})
	}
	callTool(t, cs, "save_memory", map[string]any{"collection": "health", "text": dentistText})

	// update_profile deep-merges, twice, and keeps count.
	callTool(t, cs, "update_profile", map[string]any{"data": map[string]any{
		"name": "Alice", "preferences": map[string]any{"coffee": "black", "dietary": []any{"vegan"}},
	}, "reason": "introduced herself"})
	p := callTool(t, cs, "update_profile", map[string]any{"data": map[string]any{
		"preferences": map[string]any{"coffee": nil, "tea": "green"},
	}, "reason": "switched to tea"})
	want := map[string]any{"name": "Alice", "preferences": map[string]any{"dietary": []any{"vegan"}, "tea": "green"}}
	if !sameJSON(p["profile"], want) || p["version"] != 2.0 || p["change"].(map[string]any)["reason"] != "switched to tea" {
		t.Errorf("update_profile = %v, want %v at version 2", p, want)
	}
	if e := callToolError(t, cs, "update_profile", map[string]any{"data": "not an object"}); e["code"] != "VALIDATION_ERROR" {
		t.Errorf("a profile that is not an object: %v", e)
	}

	// The default budget holds everything's names; the response never
	// exceeds the budget it states, counted on the bytes received.
	for _, budget := range []int{0, 300, 800} {
		args := map[string]any{}
		if budget > 0 {
			args["budget_tokens"] = budget
		}
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "get_user_context", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("get_user_context(%v): %v %+v", args, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var uc struct {
			BudgetTokens int            `json:"budget_tokens"`
			TokensUsed   int            `json:"tokens_used"`
			Profile      map[string]any `json:"profile"`
			EntityTypes  []struct {
				EntityType string `json:"entity_type"`
				Count      int    `json:"count"`
			} `json:"entity_types"`
			Memories struct {
				Available   bool `json:"available"`
				Collections []struct {
					Name  string `json:"name"`
					Count int    `json:"count"`
				} `json:"collections"`
				Recent []map[string]any `json:"recent"`
			} `json:"memories"`
			Entities  []map[string]any `json:"entities"`
			Omitted   map[string]int   `json:"omitted"`
			Truncated bool             `json:"truncated"`
		}
		if err := json.Unmarshal(raw, &uc); err != nil {
			t.Fatal(err)
		}
		// meta is the server's per-call envelope, outside what the budget
		// counts.
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		delete(body, "meta")
		counted, _ := json.Marshal(body)
		if tokens := (len(counted) + 2) / 3; tokens > uc.BudgetTokens || uc.TokensUsed > uc.BudgetTokens {
			t.Errorf("budget %d: the response is %d tokens (%d by its own count)", uc.BudgetTokens, tokens, uc.TokensUsed)
		}
		switch budget {
		case 0:
			if uc.BudgetTokens != 2000 || uc.Profile["name"] != "Alice" || !uc.Memories.Available || len(uc.Entities) != 20 ||
				len(uc.Memories.Recent) != 10 || !uc.Truncated {
				t.Errorf("default budget: %s", raw)
			}
			counts := map[string]int{}
			for _, tc := range uc.EntityTypes {
				counts[tc.EntityType] = tc.Count
			}
			if counts["person"] != 30 || counts["company"] != 1 {
				t.Errorf("entity types = %+v, want 30 people and 1 company", uc.EntityTypes)
			}
			cols := map[string]int{}
			for _, c := range uc.Memories.Collections {
				cols[c.Name] = c.Count
			}
			if cols["notes"] != 12 || cols["health"] != 1 {
				t.Errorf("collections = %+v, want notes 12 and health 1", uc.Memories.Collections)
			}
		case 300:
			if !uc.Truncated || len(uc.Entities) == 20 {
				t.Errorf("budget 300 left nothing out: %s", raw)
			}
		}
	}
}

// contradictionScenario raises a contradiction from two sources and
// confirms it, then one from a memory's claim and rejects it.
func contradictionScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	storeIndustry := func(industry string) map[string]any {
		return callTool(t, cs, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "company", "name": "Initech", "industry": industry},
		}})
	}
	industry := func(id string) any {
		snap := callTool(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
		return snap["snapshot"].(map[string]any)["industry"]
	}
	// open returns the open contradictions about the entity, by what
	// states the new value.
	open := func(id string) map[string]map[string]any {
		list := callTool(t, cs, "review_memories", map[string]any{"action": "list"})
		out := map[string]map[string]any{}
		for _, c := range list["contradictions"].([]any) {
			if c := c.(map[string]any); c["entity_id"] == id {
				out[c["new_from"].(string)] = c
			}
		}
		return out
	}

	first := storeIndustry("software")
	id := first["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	second := storeIndustry("printers")
	if got := industry(id); got != "printers" {
		t.Fatalf("industry = %v, want printers (the later source)", got)
	}
	c := open(id)["observation"]
	if c == nil || c["current_value"] != "software" || c["new_value"] != "printers" ||
		c["new_source_id"] != second["source_id"] || c["current_source_id"] != first["source_id"] {
		t.Fatalf("the two sources' contradiction = %v", c)
	}
	// Confirm: the value becomes a correction, which a later extraction
	// does not override.
	res := callTool(t, cs, "review_memories", map[string]any{"action": "resolve", "contradiction_id": c["contradiction_id"], "resolution": "confirm"})
	if r := res["resolved"].(map[string]any); r["status"] != "resolved" || r["correction_observation_id"] == nil {
		t.Errorf("confirm = %v", res)
	}
	fp := callTool(t, cs, "retrieve_field_provenance", map[string]any{"entity_id": id, "field": "industry"})
	if fp["source_material"].(map[string]any)["kind"] != "correction" || fp["value"] != "printers" {
		t.Errorf("industry's provenance after confirm = %v, want the confirmed value as a correction", fp)
	}
	storeIndustry("toys")
	if got := industry(id); got != "printers" {
		t.Errorf("after a later extraction, industry = %v, want the confirmed printers", got)
	}
	if c := open(id)["observation"]; c == nil || c["new_value"] != "toys" {
		t.Errorf("the later extraction's contradiction = %v", c)
	} else {
		callTool(t, cs, "review_memories", map[string]any{"action": "resolve", "contradiction_id": c["contradiction_id"], "resolution": "keep_both"})
	}

	// A memory's claim: listed with the memory, rejected, and the entity
	// is unchanged.
	memo := callTool(t, cs, "save_memory", map[string]any{"collection": "notes", "text": "Initech now makes staplers",
		"claims": []any{map[string]any{"entity_id": id, "field": "industry", "value": "staplers"}}})
	claimIDs, _ := memo["contradiction_ids"].([]any)
	if len(claimIDs) != 1 {
		t.Fatalf("save_memory with a claim = %v, want one contradiction", memo)
	}
	m := open(id)["memory"]
	if m == nil || m["contradiction_id"] != claimIDs[0] || m["new_observation_id"] != memo["id"] || m["new_value"] != "staplers" ||
		m["current_value"] != "printers" {
		t.Fatalf("the memory's contradiction = %v", m)
	}
	callTool(t, cs, "review_memories", map[string]any{"action": "resolve", "metaId": claimIDs[0], "resolution": "reject"})
	if got := industry(id); got != "printers" {
		t.Errorf("after rejecting the claim, industry = %v, want printers", got)
	}
	if left := open(id); len(left) != 0 {
		t.Errorf("still open about %s: %v", id, left)
	}
	e := callToolError(t, cs, "review_memories", map[string]any{"action": "resolve", "contradiction_id": claimIDs[0], "resolution": "confirm"})
	if e["code"] != "VALIDATION_ERROR" {
		t.Errorf("resolving twice: %v, want VALIDATION_ERROR", e)
	}
}

// sameJSON reports whether two values encode to the same JSON.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
