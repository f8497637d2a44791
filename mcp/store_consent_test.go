package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
)

// TestStoreAnswerRevealsNothingUnreadable stores a company that exists
// (once with the very arguments that stored it, once with others) and one
// that does not, as agents that may write companies but not read them:
// the answers must be the same but for the ids and hashes the arguments
// give, so that a write cannot probe for what a read would refuse. And no
// answer may hold a neighbour the agent may not read.
func TestStoreAnswerRevealsNothingUnreadable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b})
		// Acme is stored alone, so that storing it again with the same
		// arguments is deduplicated; Initech with a person, and both
		// have neighbours: Ada (a person) and Globex (a company).
		acmeArgs := map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}}
		acme := e.mustCall(t, "store", acmeArgs)["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
		out := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "company", "name": "Initech"},
			map[string]any{"entity_type": "person", "name": "Ada Secret", "email": "ada@secret.example"},
			map[string]any{"entity_type": "company", "name": "Globex"},
		}})
		var ids []string
		for _, en := range out["entities"].([]any) {
			ids = append(ids, en.(map[string]any)["entity_id"].(string))
		}
		initech, ada, globex := ids[0], ids[1], ids[2]
		// Acme Corp was a duplicate of Acme: a store of it lands on Acme.
		acmeCorp := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme Corp"}}})["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
		e.mustCall(t, "merge_entities", map[string]any{"from_entity_id": acmeCorp, "to_entity_id": acme})
		for _, rel := range [][2]string{{ada, acme}, {ada, initech}, {acme, globex}, {initech, globex}} {
			e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": rel[0], "target_entity_id": rel[1]})
		}

		writeOnly, _ := e.agent(t, e.owner.UserID, "company-writer", [3]string{"write", "entities/company", "allow"})
		readsPeople, _ := e.agent(t, e.owner.UserID, "company-writer-people-reader",
			[3]string{"write", "entities/company", "allow"}, [3]string{"read", "entities/person", "allow"}, [3]string{"read", "graph", "allow"})
		readsCompanies, _ := e.agent(t, e.owner.UserID, "company-reader-writer",
			[3]string{"write", "entities/company", "allow"}, [3]string{"read", "entities/company", "allow"}, [3]string{"read", "graph", "allow"})

		storeAs := func(t *testing.T, p consent.Principal, args map[string]any) map[string]any {
			t.Helper()
			out, merr := e.callAs(t, p, "store", args)
			if merr != nil {
				t.Fatalf("store as %s: %v", p.AgentName, merr)
			}
			return out
		}
		// company is a store of one company, with the agent's name in the
		// provenance so that no agent's call is deduplicated by another's.
		company := func(p consent.Principal, name string) map[string]any {
			return map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": name}},
				"provenance": map[string]any{"agent_id": p.AgentName}}
		}
		// Neither agent may read companies: an existing one, a
		// deduplicated one and a new one must answer alike.
		for _, p := range []consent.Principal{writeOnly, readsPeople} {
			t.Run(p.AgentName, func(t *testing.T) {
				answers := map[string]map[string]any{
					"same arguments as the stored Acme": storeAs(t, p, acmeArgs),
					"existing Initech":                  storeAs(t, p, company(p, "Initech")),
					"Acme Corp, merged into Acme":       storeAs(t, p, company(p, "Acme Corp")),
					"new company":                       storeAs(t, p, company(p, "Nowhere "+p.AgentName)),
				}
				// The merged duplicate is named by its own id: where it
				// went is as unreadable as Acme itself.
				if got := answers["Acme Corp, merged into Acme"]["entities"].([]any)[0].(map[string]any)["entity_id"]; got != acmeCorp {
					t.Errorf("storing Acme Corp answered entity %v, want its own id %s (not where it was merged)", got, acmeCorp)
				}
				want := withoutArgumentIDs(answers["new company"])
				for name, a := range answers {
					if diff := cmp.Diff(want, withoutArgumentIDs(a)); diff != "" {
						t.Errorf("%s: the answer differs from a new company's (-new +%s):\n%s\nfull answer: %v", name, name, diff, a)
					}
					assertHoldsNone(t, name, a, ada, globex, "Ada Secret", "ada@secret.example")
				}
			})
		}
		// An agent that reads companies and the graph but not people sees
		// Initech's company neighbour, never its person.
		t.Run(readsCompanies.AgentName, func(t *testing.T) {
			a := storeAs(t, readsCompanies, company(readsCompanies, "Initech"))
			assertHoldsNone(t, "existing Initech", a, ada, "Ada Secret", "ada@secret.example")
			related, _ := a["related_entities"].([]any)
			if len(related) != 1 || related[0].(map[string]any)["id"] != globex {
				t.Errorf("related_entities = %v, want only Globex (%s)", related, globex)
			}
			rels, _ := a["related_relationships"].([]any)
			if len(rels) != 1 || rels[0].(map[string]any)["target_entity_id"] != globex {
				t.Errorf("related_relationships = %v, want only Initech to Globex", rels)
			}
		})
	})
}

// withoutArgumentIDs is a store answer without what its arguments alone
// determine (the source, its hash, the run, the entities' and the
// observations' ids) and the per-call meta.
func withoutArgumentIDs(answer map[string]any) map[string]any {
	raw, _ := json.Marshal(answer)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	delete(out, "meta")
	delete(out, "source_id")
	delete(out, "content_hash")
	if in, ok := out["interpretation"].(map[string]any); ok {
		delete(in, "run_id")
	}
	for _, en := range out["entities"].([]any) {
		m := en.(map[string]any)
		delete(m, "entity_id")
		delete(m, "observation_id")
	}
	return out
}

// assertHoldsNone fails when an answer holds one of the strings.
func assertHoldsNone(t *testing.T, name string, answer map[string]any, secrets ...string) {
	t.Helper()
	raw, _ := json.Marshal(answer)
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("%s: the answer holds %q: %s", name, s, raw)
		}
	}
}

// TestRelationshipWriteAnswerRevealsNothingWithoutGraphRead creates an edge
// that exists and one that does not as an agent that may write the graph
// and read both ends but not read the graph: the answers must be the same
// but for the ids, so that the agent cannot tell the first existed (nor
// when it was made, nor its metadata).
func TestRelationshipWriteAnswerRevealsNothingWithoutGraphRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b})
		out := e.mustCall(t, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "person", "name": "Ada"},
			map[string]any{"entity_type": "person", "name": "Bo"},
			map[string]any{"entity_type": "company", "name": "Acme"},
		}})
		var ids []string
		for _, en := range out["entities"].([]any) {
			ids = append(ids, en.(map[string]any)["entity_id"].(string))
		}
		ada, bo, acme := ids[0], ids[1], ids[2]
		e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": ada, "target_entity_id": acme,
			"metadata": map[string]any{"role": "secret role"}})

		writer, _ := e.agent(t, e.owner.UserID, "graph-writer",
			[3]string{"write", "graph", "allow"}, [3]string{"read", "entities/*", "allow"})
		edge := func(from string) map[string]any {
			out, merr := e.callAs(t, writer, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": from, "target_entity_id": acme})
			if merr != nil {
				t.Fatalf("create_relationship: %v", merr)
			}
			for _, k := range []string{"meta", "id", "source_entity_id"} {
				delete(out, k)
			}
			return out
		}
		existing, fresh := edge(ada), edge(bo)
		if diff := cmp.Diff(fresh, existing); diff != "" {
			t.Errorf("the answer for an existing edge differs from a new one's (-new +existing):\n%s", diff)
		}
		assertHoldsNone(t, "existing edge", existing, "secret role")
	})
}
