package mcp_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// storeIDs stores entities as the owner and returns their ids, in order.
func storeIDs(t *testing.T, e *env, entities ...map[string]any) []string {
	t.Helper()
	list := make([]any, len(entities))
	for i, en := range entities {
		list[i] = en
	}
	var ids []string
	for _, en := range e.mustCall(t, "store", map[string]any{"entities": list})["entities"].([]any) {
		ids = append(ids, en.(map[string]any)["entity_id"].(string))
	}
	return ids
}

func companyArgs(name string) map[string]any {
	return map[string]any{"entity_type": "company", "name": name}
}

func rel(typ, from, to string) map[string]any {
	return map[string]any{"relationship_type": typ, "source_entity_id": from, "target_entity_id": to}
}

func TestCreateRelationshipsResults(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend storeBackend) {
		e := newEnvWith(t, envOptions{backend: &backend})
		ids := storeIDs(t, e, companyArgs("A"), companyArgs("B"), companyArgs("C"))
		a, b, c := ids[0], ids[1], ids[2]
		existing := e.mustCall(t, "create_relationship", rel("PART_OF", a, b))["id"]

		out := e.mustCall(t, "create_relationships", map[string]any{"relationships": []any{
			rel("PART_OF", a, b),         // existed
			rel("PART_OF", b, c),         // new
			rel("PART_OF", c, a),         // closes a cycle with the two before
			rel("likes", a, b),           // malformed type
			rel("REFERS_TO", a, "ent_x"), // missing
			map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": a, "target_entity_id": c,
				"metadata": map[string]any{"n": json.Number("1")}}, // fine
		}})
		results := out["results"].([]any)
		status := func(i int) string { return results[i].(map[string]any)["status"].(string) }
		errCode := func(i int) string {
			er, _ := results[i].(map[string]any)["error"].(map[string]any)
			code, _ := er["code"].(string)
			return code
		}
		want := []string{"existing", "created", "failed", "failed", "failed", "created"}
		for i, w := range want {
			if status(i) != w {
				t.Errorf("result %d: status %s, want %s (%v)", i, status(i), w, results[i])
			}
		}
		if got := results[0].(map[string]any)["id"]; got != existing {
			t.Errorf("existing edge answered id %v, want %v", got, existing)
		}
		for i, code := range map[int]string{2: mcp.CodeCycle, 3: mcp.CodeInvalidRelType, 4: mcp.CodeEntityNotFound} {
			if errCode(i) != code {
				t.Errorf("result %d: error %v, want %s", i, results[i], code)
			}
		}
		path := results[2].(map[string]any)["error"].(map[string]any)["details"].(map[string]any)["path"]
		if diff := cmp.Diff([]any{c, a, b, c}, path); diff != "" {
			t.Errorf("cycle path (-want +got):\n%s", diff)
		}
		if out["created"] != 2.0 || out["existing"] != 1.0 || out["failed"] != 3.0 {
			t.Errorf("counts created %v existing %v failed %v, want 2, 1, 3", out["created"], out["existing"], out["failed"])
		}
		// The failed items wrote nothing; the others are there.
		listed := e.mustCall(t, "list_relationships", map[string]any{"entity_id": a})["relationships"].([]any)
		if len(listed) != 2 {
			t.Errorf("A has %d relationships, want 2 (A→B, A→C): %v", len(listed), listed)
		}

		// The list of arguments is bounded by the schema.
		for _, n := range []int{0, 1001} {
			rels := make([]any, n)
			for i := range rels {
				rels[i] = rel("REFERS_TO", a, b)
			}
			if _, merr := e.call(t, "create_relationships", map[string]any{"relationships": rels}); merr == nil || merr.Body.Code != mcp.CodeValidation {
				t.Errorf("%d relationships: %v, want VALIDATION_ERROR", n, merr)
			}
		}
	})
}

// TestCreateRelationshipsAnswersAllThousand: a batch's results are never cut
// by the budget, however many.
func TestCreateRelationshipsAnswersAllThousand(t *testing.T) {
	e := newEnv(t)
	var ents []map[string]any
	for i := range 101 {
		ents = append(ents, companyArgs(fmt.Sprint("Co ", i)))
	}
	ids := storeIDs(t, e, ents...)
	var rels []any
	for i := range 1000 {
		rels = append(rels, rel("REFERS_TO", ids[i%100], ids[100-i/100]))
	}
	out := e.mustCall(t, "create_relationships", map[string]any{"relationships": rels})
	results := out["results"].([]any)
	meta := out["meta"].(map[string]any)
	if len(results) != 1000 || meta["truncated"] != false {
		t.Fatalf("%d results, truncated %v; want 1000, not truncated", len(results), meta["truncated"])
	}
	// i%100 == 100-i/100 happens for 10 requests: self-loops, allowed
	// for REFERS_TO; all are created once and repeats are existing.
	seen := map[string]bool{}
	for i, r := range results {
		m := r.(map[string]any)
		id, _ := m["id"].(string)
		wantStatus := "created"
		if seen[id] {
			wantStatus = "existing"
		}
		seen[id] = true
		if m["status"] != wantStatus {
			t.Fatalf("result %d: %v, want %s", i, m, wantStatus)
		}
	}
	if meta["bytes"].(float64) <= meta["budget_bytes"].(float64) {
		t.Errorf("meta %v: a thousand results should be over the budget that does not cut them", meta)
	}
}

// TestCreateRelationshipsConsent: without graph read a result says only
// that its edge was written (as create_relationship leaves out created),
// with no counts that would tell; an endpoint the agent may not read is
// ENTITY_NOT_FOUND for that item alone, exactly as a missing id is.
func TestCreateRelationshipsConsent(t *testing.T) {
	e := newEnv(t)
	ids := storeIDs(t, e, companyArgs("Acme"), map[string]any{"entity_type": "person", "name": "Ada"},
		map[string]any{"entity_type": "person", "name": "Bo"}, map[string]any{"entity_type": "invoice", "invoice_number": "INV-1", "vendor_name": "V", "issue_date": "2026-01-01"})
	acme, ada, bo, invoice := ids[0], ids[1], ids[2], ids[3]
	e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": ada, "target_entity_id": acme,
		"metadata": map[string]any{"role": "secret role"}})

	writer, _ := e.agent(t, e.owner.UserID, "graph-writer",
		[3]string{"write", "graph", "allow"}, [3]string{"read", "entities/company", "allow"}, [3]string{"read", "entities/person", "allow"})
	out, merr := e.callAs(t, writer, "create_relationships", map[string]any{"relationships": []any{
		rel("PART_OF", ada, acme),          // existed
		rel("PART_OF", bo, acme),           // new
		rel("REFERS_TO", invoice, acme),    // the invoice is unreadable
		rel("REFERS_TO", "ent_nope", acme), // missing
	}})
	if merr != nil {
		t.Fatal(merr)
	}
	results := out["results"].([]any)
	for i := range 2 {
		if m := results[i].(map[string]any); m["status"] != "written" {
			t.Errorf("result %d without graph read: %v, want status written", i, m)
		}
	}
	if _, ok := out["created"]; ok {
		t.Errorf("counts of created edges without graph read: %v", out)
	}
	if _, ok := out["existing"]; ok {
		t.Errorf("counts of existing edges without graph read: %v", out)
	}
	assertHoldsNone(t, "batch without graph read", out, "secret role")
	unreadable, missing := results[2].(map[string]any)["error"].(map[string]any), results[3].(map[string]any)["error"].(map[string]any)
	for _, er := range []map[string]any{unreadable, missing} {
		delete(er["details"].(map[string]any), "id")
		er["message"] = ""
	}
	if diff := cmp.Diff(missing, unreadable); diff != "" {
		t.Errorf("an unreadable endpoint's error differs from a missing one's (-missing +unreadable):\n%s", diff)
	}
	if out["failed"] != 2.0 {
		t.Errorf("failed = %v, want 2", out["failed"])
	}

	// Without graph write the call is refused as create_relationship is.
	reader, _ := e.agent(t, e.owner.UserID, "reader", [3]string{"read", "*", "allow"})
	if _, merr := e.callAs(t, reader, "create_relationships", map[string]any{"relationships": []any{rel("PART_OF", bo, acme)}}); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
		t.Errorf("without graph write: %v, want CONSENT_DENIED", merr)
	}
}

// TestCreateRelationshipsCountsOnce: a batch is one call against the rate
// limit, of create_relationship's class.
func TestCreateRelationshipsCountsOnce(t *testing.T) {
	tools := map[string]*mcp.Tool{}
	for _, tool := range mcp.AllTools(mcp.Deps{}) {
		tools[tool.Name()] = tool
	}
	if tools["create_relationships"].RateClass != tools["create_relationship"].RateClass {
		t.Errorf("rate class %s, want create_relationship's %s", tools["create_relationships"].RateClass, tools["create_relationship"].RateClass)
	}
	e := newEnvWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 1, consent.RateClassStore: 10}})
	p, _ := e.agent(t, e.owner.UserID, "claude", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"})
	out, merr := e.callAs(t, p, "store", map[string]any{"entities": []any{companyArgs("A"), companyArgs("B")}})
	if merr != nil {
		t.Fatal(merr)
	}
	a := out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	b := out["entities"].([]any)[1].(map[string]any)["entity_id"].(string)
	var rels []any
	for range 50 {
		rels = append(rels, rel("REFERS_TO", a, b))
	}
	if _, merr := e.callAs(t, p, "create_relationships", map[string]any{"relationships": rels}); merr != nil {
		t.Fatalf("a batch of 50 under a limit of 1: %v", merr)
	}
	if _, merr := e.callAs(t, p, "create_relationships", map[string]any{"relationships": rels[:1]}); merr == nil || merr.Body.Code != mcp.CodeRateLimited {
		t.Errorf("second call: %v, want RATE_LIMIT_EXCEEDED", merr)
	}
}

// TestStoreAnswersEveryEntity: a store of the most entities a call takes
// answers every one of them, with whether it was created, however far over
// the budget; storing them again answers them all as not created.
func TestStoreAnswersEveryEntity(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend storeBackend) {
		e := newEnvWith(t, envOptions{backend: &backend})
		var ents []any
		for i := range 1000 {
			ents = append(ents, companyArgs(fmt.Sprintf("Company %04d", i)))
		}
		args := map[string]any{"entities": ents}
		for round, wantCreated := range []bool{true, false} {
			out := e.mustCall(t, "store", args)
			lines := out["entities"].([]any)
			if len(lines) != 1000 {
				t.Fatalf("round %d: %d entity lines, want 1000 (meta %v)", round, len(lines), out["meta"])
			}
			seen := map[string]bool{}
			for i, l := range lines {
				m := l.(map[string]any)
				id, _ := m["entity_id"].(string)
				if id == "" || seen[id] || m["entity_type"] != "company" || m["created"] != wantCreated {
					t.Fatalf("round %d: line %d = %v, want a new company id, created %v", round, i, m, wantCreated)
				}
				seen[id] = true
			}
			if meta := out["meta"].(map[string]any); meta["truncated"] != false || meta["next_cursor"] != nil {
				t.Errorf("round %d: meta %v, want nothing cut", round, meta)
			}
		}
	})
}

// TestStoreRelatedContinuesWithCursor: a store's related entities and
// relationships are cut at the budget with a cursor, and storing the same
// arguments again with it (which writes nothing) continues them until
// every one has been answered once.
func TestStoreRelatedContinuesWithCursor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend storeBackend) {
		e := newEnvWith(t, envOptions{backend: &backend})
		var ents []map[string]any
		for i := range 60 {
			ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Neighbour %02d", i),
				"industry": "a long enough industry name to fill the budget quickly"})
		}
		neighbours := storeIDs(t, e, ents...)
		person := storeIDs(t, e, map[string]any{"entity_type": "person", "name": "Ada"})[0]
		var rels []any
		for _, n := range neighbours {
			rels = append(rels, rel("REFERS_TO", person, n))
		}
		e.mustCall(t, "create_relationships", map[string]any{"relationships": rels})

		args := map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Ada", "email": "ada@example.com"}}}
		gotRels, gotEnts := map[string]int{}, map[string]int{}
		pages := 0
		var cursor string
		for {
			call := maps.Clone(args)
			if cursor != "" {
				call["cursor"] = cursor
			}
			out := e.mustCall(t, "store", call)
			pages++
			lines := out["entities"].([]any)
			if pages == 1 && (len(lines) != 1 || lines[0].(map[string]any)["entity_id"] != person) {
				t.Fatalf("first page's entities = %v, want Ada", lines)
			}
			if pages > 1 && len(lines) != 0 {
				t.Errorf("page %d repeats the entities of the first: %v", pages, lines)
			}
			for _, r := range out["related_relationships"].([]any) {
				gotRels[r.(map[string]any)["id"].(string)]++
			}
			for _, en := range out["related_entities"].([]any) {
				gotEnts[en.(map[string]any)["id"].(string)]++
			}
			meta := out["meta"].(map[string]any)
			next, _ := meta["next_cursor"].(string)
			if next == "" {
				break
			}
			if meta["truncated"] != true {
				t.Errorf("page %d has a cursor but is not truncated: %v", pages, meta)
			}
			if pages > 100 {
				t.Fatal("the cursor does not progress")
			}
			cursor = next
		}
		if pages < 3 {
			t.Errorf("%d pages; the related entities should need several at a 5 KB budget", pages)
		}
		// The oracle: Ada's relationships, as list_relationships gives them
		// (store shows at most 50 of each).
		listed := readAll(t, e, "list_relationships", map[string]any{"entity_id": person, "limit": 50}, "relationships")
		if len(listed) != 50 {
			t.Fatalf("list_relationships listed %d, want 50", len(listed))
		}
		wantRels, wantEnts := map[string]int{}, map[string]int{}
		for _, r := range listed {
			m := r.(map[string]any)
			wantRels[m["id"].(string)] = 1
			wantEnts[m["target_entity_id"].(string)] = 1
		}
		if diff := cmp.Diff(wantRels, gotRels); diff != "" {
			t.Errorf("related relationships over all pages (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantEnts, gotEnts); diff != "" {
			t.Errorf("related entities over all pages (-want +got):\n%s", diff)
		}

		// A cursor continues only the call it came from.
		other := map[string]any{"entities": []any{map[string]any{"entity_type": "person", "name": "Bo"}}, "cursor": cursor}
		if cursor != "" {
			if _, merr := e.call(t, "store", other); merr == nil || merr.Body.Code != mcp.CodeValidation {
				t.Errorf("another store's cursor: %v, want VALIDATION_ERROR", merr)
			}
		}
	})
}

// TestStoreCreatedFlagRespectsConsent: a store line says whether its entity
// was created only for a type the agent may read; for another it holds no
// created at all, new or not.
func TestStoreCreatedFlagRespectsConsent(t *testing.T) {
	e := newEnv(t)
	storeIDs(t, e, companyArgs("Existing Co"))
	agent, _ := e.agent(t, e.owner.UserID, "people-reader",
		[3]string{"write", "entities/*", "allow"}, [3]string{"read", "entities/person", "allow"})
	for _, name := range []string{"Existing Co", "New Co"} {
		out, merr := e.callAs(t, agent, "store", map[string]any{"entities": []any{
			companyArgs(name), map[string]any{"entity_type": "person", "name": "Person of " + name},
		}})
		if merr != nil {
			t.Fatal(merr)
		}
		lines := out["entities"].([]any)
		if _, ok := lines[0].(map[string]any)["created"]; ok {
			t.Errorf("%s: the unreadable company's line says created: %v", name, lines[0])
		}
		if got := lines[1].(map[string]any)["created"]; got != true {
			t.Errorf("%s: the readable person's line has created %v, want true", name, got)
		}
	}
	// And again with the same arguments: still nothing on the company.
	out, merr := e.callAs(t, agent, "store", map[string]any{"entities": []any{
		companyArgs("New Co"), map[string]any{"entity_type": "person", "name": "Person of New Co"},
	}})
	if merr != nil {
		t.Fatal(merr)
	}
	lines := out["entities"].([]any)
	if _, ok := lines[0].(map[string]any)["created"]; ok || lines[1].(map[string]any)["created"] != false {
		t.Errorf("repeat: lines %v, want no created on the company and false on the person", lines)
	}
	if slices.ContainsFunc(lines, func(l any) bool { return l.(map[string]any)["entity_type"] == nil }) {
		t.Errorf("lines without a type: %v", lines)
	}
}

// readAll calls a read tool and follows its cursor, and returns every item
// of one list over all pages.
func readAll(t *testing.T, e *env, tool string, args map[string]any, list string) []any {
	t.Helper()
	var all []any
	call := maps.Clone(args)
	for range 1000 {
		out := e.mustCall(t, tool, call)
		all = append(all, out[list].([]any)...)
		next, _ := out["meta"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			return all
		}
		call["cursor"] = next
	}
	t.Fatalf("%s: the cursor does not progress", tool)
	return nil
}

// BenchmarkCreateRelationshipsTool writes 100 relationships through Handle,
// with consent, audit log and rate limiter as in production: one
// create_relationships call, or 100 create_relationship calls.
func BenchmarkCreateRelationshipsTool(b *testing.B) {
	for _, batch := range []bool{true, false} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			e := newEnvWith(b, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 1 << 30, consent.RateClassStore: 1 << 30}})
			var ents []any
			for i := range 1000 {
				ents = append(ents, companyArgs(fmt.Sprint("Co ", i)))
			}
			out, merr := e.callAs(b, e.owner, "store", map[string]any{"entities": ents})
			if merr != nil {
				b.Fatal(merr)
			}
			var ids []string
			for _, l := range out["entities"].([]any) {
				ids = append(ids, l.(map[string]any)["entity_id"].(string))
			}
			round := 0
			for b.Loop() {
				var rels []any
				for i := range 100 {
					// New edges for the first 900 rounds.
					rels = append(rels, rel("REFERS_TO", ids[i+100*(round%10)], ids[(i*7+round)%1000]))
				}
				round++
				if batch {
					if _, merr := e.callAs(b, e.owner, "create_relationships", map[string]any{"relationships": rels}); merr != nil {
						b.Fatal(merr)
					}
					continue
				}
				for _, r := range rels {
					if _, merr := e.callAs(b, e.owner, "create_relationship", r); merr != nil {
						b.Fatal(merr)
					}
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "rels/s")
		})
	}
}
