package main

import (
	"strings"
	"testing"
)

// TestAdminErase erases an entity with the admin CLI while serve runs on
// the same store: a dry run lists what would go and changes nothing; the
// erasure removes it and is in the audit log.
func TestAdminErase(t *testing.T) {
	dir := t.TempDir()
	url := startServe(t, dir)
	owner := connectHTTP(t, url)
	res := callTool(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": "Grace Hopper", "notes": "admiral"},
		map[string]any{"entity_type": "person", "name": "Ada Lovelace"},
	}})
	ents := res["entities"].([]any)
	grace, ada := ents[0].(map[string]any)["entity_id"].(string), ents[1].(map[string]any)["entity_id"].(string)
	dd := []string{"--data-dir", dir}

	out := cairnAdmin(t, nil, false, append([]string{"erase", "--entity", grace, "--dry-run"}, dd...)...)
	if !strings.Contains(out, "would erase entity "+grace) || !strings.Contains(out, "observations") {
		t.Errorf("dry run printed %q", out)
	}
	callTool(t, owner, "retrieve_entity_snapshot", map[string]any{"entity_id": grace})

	out = cairnAdmin(t, nil, false, append([]string{"erase", "--entity", grace, "--reason", "request 42"}, dd...)...)
	if !strings.Contains(out, "erased entity "+grace) {
		t.Errorf("erase printed %q", out)
	}
	if e := callToolError(t, owner, "retrieve_entity_snapshot", map[string]any{"entity_id": grace}); e["code"] != "ENTITY_NOT_FOUND" {
		t.Errorf("the erased entity: %v", e)
	}
	callTool(t, owner, "retrieve_entity_snapshot", map[string]any{"entity_id": ada})
	if audit := cairnAdmin(t, nil, false, append([]string{"audit", "--tool", "admin erase"}, dd...)...); !strings.Contains(audit, "admin erase") || strings.Contains(audit, "request 42") {
		t.Errorf("audit = %s", audit)
	}
	// All of a user's data: TestAdminEraseUser (eraseuser_test.go).
	if msg := cairnAdmin(t, nil, true, append([]string{"erase"}, dd...)...); !strings.Contains(msg, "--entity") {
		t.Errorf("erase without a target: %s", msg)
	}
}
