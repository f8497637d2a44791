package mcp_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// Facts a user stores are facts agents see (issue 35): a new type's first
// store keeps only its identity in the schema, and a built-in type has no
// field for a person's role, but retrieve_entities and get_user_context
// show those values, marked as not in the schema (raw_fields), where the
// snapshot is shown.
func TestFactsBeyondTheSchemaAreShown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
		e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "recipe", "name": "Lasagna", "servings": 4, "cuisine": "italian"},
			map[string]any{"entity_type": "person", "name": "Ada Lovelace", "role": "analyst"},
		}})
		recipes := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "recipe"})["entities"].([]any)
		if len(recipes) != 1 {
			t.Fatalf("recipes = %v", recipes)
		}
		raw, _ := recipes[0].(map[string]any)["raw_fields"].(map[string]any)
		if raw["servings"] != 4.0 || raw["cuisine"] != "italian" {
			t.Fatalf("recipe = %v, want servings and cuisine in raw_fields", recipes[0])
		}
		people := e.mustCall(t, "retrieve_entities", map[string]any{"query": "Ada"})["entities"].([]any)
		if len(people) != 1 || fmt.Sprint(people[0].(map[string]any)["raw_fields"]) != "map[role:analyst]" {
			t.Fatalf("a search's person = %v, want role in raw_fields", people)
		}
		if bare := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "recipe", "include_snapshots": false})["entities"].([]any); bare[0].(map[string]any)["raw_fields"] != nil {
			t.Fatalf("without snapshots = %v, want no raw_fields either", bare)
		}

		ctx := e.mustCall(t, "get_user_context", map[string]any{})
		found := 0
		for _, it := range ctx["entities"].([]any) {
			ce := it.(map[string]any)
			facts, _ := ce["facts"].(map[string]any)
			switch ce["name"] {
			case "Lasagna":
				if facts["servings"] != 4.0 || facts["cuisine"] != "italian" || fmt.Sprint(ce["raw_fields"]) != "[cuisine servings]" {
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

// A relationship type no schema declares is registered for the user on
// first use (issue 35): WORKS_AT answers relationship_type_created once,
// is not acyclic, and traversals follow it by name; a malformed name is
// still refused, and an agent without graph read is not told whether the
// type was new.
func TestRelationshipTypeOnFirstUse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b})
		ids := storeIDs(t, e, map[string]any{"entity_type": "person", "name": "Ada"}, companyArgs("Acme"), companyArgs("Initech"))
		ada, acme, initech := ids[0], ids[1], ids[2]
		first := e.mustCall(t, "create_relationship", rel("WORKS_AT", ada, acme))
		if first["relationship_type_created"] != true || first["created"] != true {
			t.Fatalf("first WORKS_AT = %v, want relationship_type_created", first)
		}
		again := e.mustCall(t, "create_relationship", rel("WORKS_AT", acme, ada)) // not acyclic
		if again["relationship_type_created"] != nil || again["created"] != true {
			t.Fatalf("second WORKS_AT = %v, want no relationship_type_created", again)
		}
		batch := e.mustCall(t, "create_relationships", map[string]any{"relationships": []any{
			rel("WORKS_AT", ada, initech), rel("MENTORS", ada, acme), rel("MENTORS", acme, initech)}})
		if fmt.Sprint(batch["relationship_types_created"]) != "[MENTORS]" || batch["failed"] != 0.0 {
			t.Fatalf("batch = %v, want MENTORS registered", batch)
		}
		related := e.mustCall(t, "retrieve_related_entities", map[string]any{"entity_id": ada, "relationship_types": []any{"WORKS_AT"}, "max_hops": 1})
		var names []string
		for _, it := range related["entities"].([]any) {
			names = append(names, it.(map[string]any)["canonical_name"].(string))
		}
		if slices.Sort(names); fmt.Sprint(names) != "[Acme Initech]" {
			t.Fatalf("Ada's employers = %v (%v), want Acme and Initech", names, related)
		}
		if _, merr := e.call(t, "create_relationship", rel("works at", ada, acme)); merr == nil || merr.Body.Code != mcp.CodeInvalidRelType {
			t.Fatalf("a malformed type: %v, want %s", merr, mcp.CodeInvalidRelType)
		}
		writer, _ := e.agent(t, e.owner.UserID, "writer", [3]string{"write", "graph", "allow"}, [3]string{"read", "entities/*", "allow"})
		out, merr := e.callAs(t, writer, "create_relationship", rel("ADVISES", ada, acme))
		if merr != nil || out["relationship_type_created"] != nil || out["created"] != nil {
			t.Fatalf("a writer without graph read: %v, %v; want the edge written, nothing said of what existed", out, merr)
		}
	})
}
