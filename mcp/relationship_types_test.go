package mcp_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

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
