package mcp_test

import "testing"

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
