package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/mcp"
)

// jsonString returns a string whose JSON encoding is exactly n bytes.
func jsonString(n int) string { return strings.Repeat("x", n-2) }

// TestFieldValuesAreBounded stores, corrects and writes metadata with
// values exactly at the default bound (accepted) and one byte over it
// (VALIDATION_ERROR naming the field, with the bound in expected), at the
// top level and inside an array or object.
func TestFieldValuesAreBounded(t *testing.T) {
	const limit = knowledge.DefaultMaxFieldBytes
	e := newEnvWith(t, envOptions{contextStores: true})
	person := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ada"}}})["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	company := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}})["entities"].([]any)[0].(map[string]any)["entity_id"].(string)

	// ["a", s] is len(s)+6 bytes of JSON.
	aliases := func(n int) []any { return []any{"a", jsonString(n - 6)} }
	store := func(fields map[string]any) map[string]any {
		fields["entity_type"] = "person"
		return map[string]any{"entities": []any{fields}}
	}
	correct := func(field string, v any) map[string]any {
		return map[string]any{"entity_id": person, "entity_type": "person", "field": field, "value": v}
	}
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantField string // empty: accepted
	}{
		{"store: name at the bound", "store", store(map[string]any{"name": jsonString(limit)}), ""},
		{"store: name one byte over", "store", store(map[string]any{"name": jsonString(limit + 1)}), "entities[0].name"},
		{"store: array at the bound", "store", store(map[string]any{"name": "Bo", "aliases": aliases(limit)}), ""},
		{"store: array one byte over", "store", store(map[string]any{"name": "Bo", "aliases": aliases(limit + 1)}), "entities[0].aliases"},
		{"store: array member over by itself", "store", store(map[string]any{"name": "Bo", "aliases": []any{"a", jsonString(limit + 1)}}), "entities[0].aliases[1]"},
		{"store: unknown field at the bound", "store", store(map[string]any{"name": "Cy", "scrap": map[string]any{"note": jsonString(limit - 9)}}), ""},
		{"store: unknown nested field over", "store", store(map[string]any{"name": "Cy", "scrap": map[string]any{"note": jsonString(limit + 1)}}), "entities[0].scrap.note"},
		{"store: second entity over", "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "person", "name": "Dee"},
			map[string]any{"entity_type": "company", "name": "Big", "industry": jsonString(limit + 1)},
		}}, "entities[1].industry"},
		{"store: provenance over", "store", map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Eve"}},
			"provenance": map[string]any{"note": jsonString(limit + 1)}}, "provenance.note"},
		{"correct: at the bound", "correct", correct("notes", jsonString(limit)), ""},
		{"correct: one byte over", "correct", correct("notes", jsonString(limit+1)), "value"},
		{"correct: array at the bound", "correct", correct("aliases", aliases(limit)), ""},
		{"correct: array member over by itself", "correct", correct("aliases", []any{"a", jsonString(limit + 1)}), "value[1]"},
		{"create_relationship: metadata at the bound", "create_relationship", map[string]any{"relationship_type": "PART_OF",
			"source_entity_id": person, "target_entity_id": company, "metadata": map[string]any{"role": jsonString(limit)}}, ""},
		{"create_relationship: metadata over", "create_relationship", map[string]any{"relationship_type": "PART_OF",
			"source_entity_id": person, "target_entity_id": company, "metadata": map[string]any{"role": jsonString(limit + 1)}}, "metadata.role"},
		// The profile is bounded as a whole (knowledge.MaxProfileBytes).
		{"update_profile: member over", "update_profile", map[string]any{"data": map[string]any{"bio": jsonString(limit + 1)}}, "data"},
		{"save_memory: metadata over", "save_memory", map[string]any{"collection": "notes", "text": "memo",
			"metadata": map[string]any{"blob": jsonString(limit + 1)}}, "metadata.blob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, merr := e.call(t, tt.tool, tt.args)
			if tt.wantField == "" {
				if merr != nil {
					t.Fatalf("refused a value at the bound: %s: %s", merr.Body.Code, merr.Body.Message)
				}
				return
			}
			if merr == nil {
				t.Fatalf("accepted a value over the bound")
			}
			if merr.Body.Code != mcp.CodeValidation {
				t.Fatalf("code = %s (%s), want VALIDATION_ERROR", merr.Body.Code, merr.Body.Message)
			}
			if got := merr.Body.Details["field"]; got != tt.wantField {
				t.Errorf("details.field = %v, want %s (message %q)", got, tt.wantField, merr.Body.Message)
			}
			if got, _ := merr.Body.Details["expected"].(string); !strings.Contains(got, fmt.Sprint(limit)) {
				t.Errorf("details.expected = %q, want the bound %d in it", got, limit)
			}
		})
	}
	// A refused call writes nothing: not Dee, whose own fields were fine,
	// nor Eve.
	for _, name := range []string{"Dee", "Eve"} {
		out := e.mustCall(t, "retrieve_entity_by_identifier", map[string]any{"identifier": name})
		if got := out["entities"].([]any); len(got) != 0 {
			t.Errorf("%s was stored by a refused call: %v", name, got)
		}
	}
}
