package mcp_test

import (
	"fmt"
	"testing"
)

// Facts a user stores are facts agents see (issue 35): a new type's first
// store keeps only its identity in the schema, and a built-in type has no
// field for a person's role, but retrieve_entities and get_user_context
// show those values, marked as not in the schema (raw_fields), where the
// snapshot is shown.
func TestFactsBeyondTheSchemaAreShown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
		// A type's first store infers its schema from every field it
		// gives; fields a later store brings are facts beyond it.
		first := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "recipe", "name": "Toast", "minutes": 3},
		}})
		if fmt.Sprint(first["schema_created"]) != "[map[entity_type:recipe fields:map[minutes:number name:string] identity_fields:[name] schema_version:1.0 scope:user]]" || first["unknown_fields_count"] != 0.0 {
			t.Fatalf("first store = %v, want recipe created with every field", first)
		}
		e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "recipe", "name": "Lasagna", "servings": 4, "cuisine": "italian", "minutes": 90},
			map[string]any{"entity_type": "person", "name": "Ada Lovelace", "role": "analyst"},
		}})
		recipes := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "recipe", "query": "Lasagna"})["entities"].([]any)
		if len(recipes) != 1 {
			t.Fatalf("recipes = %v", recipes)
		}
		raw, _ := recipes[0].(map[string]any)["raw_fields"].(map[string]any)
		snap, _ := recipes[0].(map[string]any)["snapshot"].(map[string]any)
		if raw["servings"] != 4.0 || raw["cuisine"] != "italian" || raw["minutes"] != nil || snap["minutes"] != 90.0 {
			t.Fatalf("recipe = %v, want servings and cuisine in raw_fields, minutes (inferred by the first store) in the snapshot", recipes[0])
		}
		people := e.mustCall(t, "retrieve_entities", map[string]any{"query": "Ada"})["entities"].([]any)
		if len(people) != 1 || fmt.Sprint(people[0].(map[string]any)["raw_fields"]) != "map[role:analyst]" {
			t.Fatalf("a search's person = %v, want role in raw_fields", people)
		}
		if bare := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "recipe", "query": "Lasagna", "include_snapshots": false})["entities"].([]any); bare[0].(map[string]any)["raw_fields"] != nil {
			t.Fatalf("without snapshots = %v, want no raw_fields either", bare)
		}

		ctx := e.mustCall(t, "get_user_context", map[string]any{})
		found := 0
		for _, it := range ctx["entities"].([]any) {
			ce := it.(map[string]any)
			facts, _ := ce["facts"].(map[string]any)
			switch ce["name"] {
			case "Lasagna":
				if facts["servings"] != 4.0 || facts["cuisine"] != "italian" || facts["minutes"] != 90.0 || fmt.Sprint(ce["raw_fields"]) != "[cuisine servings]" {
					t.Errorf("context's recipe = %v", ce)
				}
				found++
			case "Ada Lovelace":
				if facts["role"] != "analyst" || fmt.Sprint(ce["raw_fields"]) != "[role]" {
					t.Errorf("context's person = %v", ce)
				}
				found++
			}
		}
		if found != 2 {
			t.Fatalf("context = %v, want the recipe and the person", ctx["entities"])
		}
	})
}
