package main

import (
	"fmt"
	"testing"
)

// TestEndToEndBatchWrites drives the built binary over stdio as a bulk
// loader does: a store of 1,000 entities answers all 1,000 ids, and one
// create_relationships call chains them, with a result for every edge,
// the last one refused because it would close the chain into a cycle.
func TestEndToEndBatchWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		cs := connectStdio(t, dataDir, env...)
		var ents []any
		for i := range 1000 {
			ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Batch Co %04d", i)})
		}
		out := callTool(t, cs, "store", map[string]any{"entities": ents})
		lines := out["entities"].([]any)
		if len(lines) != 1000 {
			t.Fatalf("store of 1000 answered %d entities (meta %v)", len(lines), out["meta"])
		}
		ids := make([]string, len(lines))
		for i, l := range lines {
			m := l.(map[string]any)
			ids[i], _ = m["entity_id"].(string)
			if ids[i] == "" || m["created"] != true {
				t.Fatalf("line %d = %v, want an id and created", i, m)
			}
		}
		var rels []any
		for i := range 999 {
			rels = append(rels, map[string]any{"relationship_type": "PART_OF", "source_entity_id": ids[i], "target_entity_id": ids[i+1]})
		}
		rels = append(rels, map[string]any{"relationship_type": "PART_OF", "source_entity_id": ids[999], "target_entity_id": ids[0]})
		out = callTool(t, cs, "create_relationships", map[string]any{"relationships": rels})
		results := out["results"].([]any)
		if len(results) != 1000 || out["created"] != 999.0 || out["failed"] != 1.0 {
			t.Fatalf("%d results, created %v, failed %v; want 1000, 999, 1", len(results), out["created"], out["failed"])
		}
		last := results[999].(map[string]any)
		if last["status"] != "failed" || last["error"].(map[string]any)["code"] != "CYCLE_DETECTED" {
			t.Errorf("closing the chain: %v, want CYCLE_DETECTED", last)
		}
		if path, _ := last["error"].(map[string]any)["details"].(map[string]any)["path"].([]any); len(path) != 1001 {
			t.Errorf("the cycle's path has %d entities, want 1001 (the chain, closed)", len(path))
		}
	})
}
