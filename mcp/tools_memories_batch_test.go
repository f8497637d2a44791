package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/vector/embed"
)

// TestSaveMemoriesAndOccurredAt saves a conversation in one call with the
// times its turns were said, then finds them by those times; a bad item
// fails the whole call and names itself.
func TestSaveMemoriesAndOccurredAt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		srvs, p := memoryServers(t, b, embed.NewLocal())
		s := srvs[0]
		var items []any
		for i := range 130 { // more than one embedding batch
			items = append(items, map[string]any{
				"collection": "chat", "text": fmt.Sprintf("Turn %d of the conversation about gardening", i),
				"occurred_at": fmt.Sprintf("2024-03-%02dT10:00:00+01:00", 1+i%28), "tags": []string{"chat"},
			})
		}
		out := mustInvoke(t, s, p, "save_memories", map[string]any{"memories": items})
		results, _ := out["results"].([]any)
		if len(results) != len(items) {
			t.Fatalf("save_memories returned %d results for %d items", len(results), len(items))
		}
		first := results[0].(map[string]any)
		if first["occurred_at"] != "2024-03-01T09:00:00Z" || first["collection"] != "chat" || !strings.HasPrefix(first["id"].(string), "mem_") {
			t.Errorf("first result %v, want occurred_at 2024-03-01T09:00:00Z", first)
		}
		if meta, _ := out["meta"].(map[string]any); meta["truncated"] == true {
			t.Errorf("a write's results were cut: %v", meta)
		}
		// date_range bounds when the turns were said, not when they were saved.
		res := mustInvoke(t, s, p, "search_memory", map[string]any{"collection": "chat", "query": "gardening", "limit": 100,
			"date_range": map[string]any{"start": "2024-03-02T00:00:00Z", "end": "2024-03-02T23:59:59Z"}})
		hits, _ := res["results"].([]any)
		if len(hits) != 5 { // turns 1, 29, 57, 85, 113
			t.Errorf("turns said on 2 March: %d, want 5", len(hits))
		}
		for _, h := range hits {
			if at := h.(map[string]any)["occurred_at"]; at != "2024-03-02T09:00:00Z" {
				t.Errorf("hit said at %v", at)
			}
		}
		saved := mustInvoke(t, s, p, "save_memory", map[string]any{"collection": "chat", "text": "said now"})
		if saved["occurred_at"] != saved["created_at"] {
			t.Errorf("without occurred_at: %v, want created_at %v", saved["occurred_at"], saved["created_at"])
		}

		// All or none: the bad item is named, nothing is saved.
		bad := []any{map[string]any{"collection": "other", "text": "fine"}, map[string]any{"collection": "other", "text": " "}}
		if _, merr := invoke(t, s, p, "save_memories", map[string]any{"memories": bad}); merr == nil || merr.Body.Code != mcp.CodeValidation ||
			merr.Body.Details["field"] != "memories[1].text" {
			t.Errorf("an empty text in item 1: got %+v", merr)
		}
		bad = []any{map[string]any{"collection": "other", "text": "fine", "occurred_at": "last week"}}
		if _, merr := invoke(t, s, p, "save_memories", map[string]any{"memories": bad}); merr == nil || merr.Body.Code != mcp.CodeValidation ||
			merr.Body.Details["field"] != "memories[0].occurred_at" {
			t.Errorf("a bad occurred_at: got %+v", merr)
		}
		res = mustInvoke(t, s, p, "search_memory", map[string]any{"collection": "other", "query": ""})
		if n, _ := res["results"].([]any); len(n) != 0 {
			t.Errorf("a failed batch saved %d memories", len(n))
		}
	})
}

// TestSearchMemoryFitsBudget: ten typical memories, a sentence or two
// each, come back whole from a search with limit 10 (issue 36 saw 27% of
// such answers cut at 5 KB).
func TestSearchMemoryFitsBudget(t *testing.T) {
	srvs, p := memoryServers(t, embeddedBackend, embed.NewLocal())
	s := srvs[0]
	var items []any
	for i := range 10 {
		items = append(items, map[string]any{
			"collection": "notes", "tags": []string{"travel", "family"}, "metadata": map[string]any{"source": "chat"},
			"text": fmt.Sprintf("Caroline said on the phone that her sister Beth is moving to Lisbon in the spring for a new job at the "+
				"university hospital (%d). She wants to visit in May, after the school term ends, and asked whether we could lend her our big suitcase.", i),
		})
	}
	mustInvoke(t, s, p, "save_memories", map[string]any{"memories": items})
	res := mustInvoke(t, s, p, "search_memory", map[string]any{"collection": "notes", "query": "where is Beth moving", "minSimilarity": -1})
	meta, _ := res["meta"].(map[string]any)
	if hits, _ := res["results"].([]any); len(hits) != 10 || meta["truncated"] == true {
		t.Errorf("%d of 10 typical memories returned, meta %v", len(hits), meta)
	}
}
