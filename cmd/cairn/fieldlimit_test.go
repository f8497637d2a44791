package main

import (
	"strings"
	"testing"
)

// TestMaxFieldBytesConfig runs stdio with CAIRN_MAX_FIELD_BYTES=32: a name
// of 32 bytes of JSON is stored, one of 33 is refused naming the field and
// the bound.
func TestMaxFieldBytesConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	cs := connectStdio(t, t.TempDir(), "CAIRN_MAX_FIELD_BYTES=32", "CAIRN_OWNER_KEY="+testOwnerKey)
	name := func(n int) string { return strings.Repeat("n", n-2) } // n bytes as JSON
	callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": name(32)}}})
	env := callToolError(t, cs, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": name(33)}}})
	details, _ := env["details"].(map[string]any)
	if env["code"] != "VALIDATION_ERROR" || details["field"] != "entities[0].name" || !strings.Contains(details["expected"].(string), "32") {
		t.Errorf("a 33-byte name under a 32-byte bound: %v, want VALIDATION_ERROR on entities[0].name expecting at most 32 bytes", env)
	}
}
