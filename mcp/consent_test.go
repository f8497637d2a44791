package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// seed stores a company, a person and an invoice for the owner, with a
// relationship between the person and the company, and returns their ids.
func seed(t *testing.T, e *env) (company, person, invoice string) {
	t.Helper()
	out := e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme Secret Holdings"},
		map[string]any{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
		map[string]any{"entity_type": "invoice", "vendor_name": "Acme", "invoice_number": "INV-1", "amount": 1234.5},
	}})
	ents := out["entities"].([]any)
	company, person, invoice = ents[0].(map[string]any)["entity_id"].(string), ents[1].(map[string]any)["entity_id"].(string), ents[2].(map[string]any)["entity_id"].(string)
	e.mustCall(t, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": person, "target_entity_id": company})
	return company, person, invoice
}

func TestConsentFiltersResults(t *testing.T) {
	e := newEnv(t)
	company, person, invoice := seed(t, e)
	none, _ := e.agent(t, e.owner.UserID, "nobody")
	people, _ := e.agent(t, e.owner.UserID, "people",
		[3]string{"read", "tables/person", "allow"}, [3]string{"read", "graph", "allow"})

	// An agent without rules sees nothing, and an id it may not read is
	// answered exactly like a missing id.
	out, merr := e.callAs(t, none, "retrieve_entities", map[string]any{})
	if merr != nil || len(out["entities"].([]any)) != 0 || out["total"].(float64) != 0 {
		t.Errorf("no consent: retrieve_entities = %v, %v; want nothing", out, merr)
	}
	_, hidden := e.callAs(t, none, "retrieve_entity_snapshot", map[string]any{"entity_id": invoice})
	_, missing := e.callAs(t, none, "retrieve_entity_snapshot", map[string]any{"entity_id": "ent_00000000000000000000000000000000"})
	if hidden == nil || missing == nil || hidden.Body.Code != mcp.CodeEntityNotFound || missing.Body.Code != hidden.Body.Code || hidden.Status != missing.Status {
		t.Errorf("unreadable id = %+v, missing id = %+v; want the same ENTITY_NOT_FOUND", hidden, missing)
	}
	for _, tool := range []string{"list_entity_types", "list_relationships"} {
		if _, merr := e.callAs(t, none, tool, map[string]any{}); merr == nil || merr.Body.Code != mcp.CodeConsentDenied || merr.Status != 403 {
			t.Errorf("%s without consent = %+v, want CONSENT_DENIED", tool, merr)
		}
	}
	if _, merr := e.callAs(t, none, "list_consent_rules", map[string]any{}); merr == nil || merr.Body.Code != mcp.CodeForbidden {
		t.Errorf("owner-only tool as an agent = %+v, want FORBIDDEN", merr)
	}

	// An agent allowed people and the graph sees the person, not the company
	// at the other end of its relationship, nor the invoice.
	out, merr = e.callAs(t, people, "retrieve_entities", map[string]any{})
	if merr != nil || len(out["entities"].([]any)) != 1 || out["entities"].([]any)[0].(map[string]any)["id"] != person {
		t.Errorf("people agent: retrieve_entities = %v, %v; want only the person", out, merr)
	}
	out, merr = e.callAs(t, people, "retrieve_related_entities", map[string]any{"entity_id": person, "max_hops": 2})
	if merr != nil {
		t.Fatal(merr)
	}
	if b, _ := json.Marshal(out); strings.Contains(string(b), company) || strings.Contains(string(b), "Acme") {
		t.Errorf("traversal leaked the company: %s", b)
	}
	if _, merr := e.callAs(t, people, "retrieve_entity_snapshot", map[string]any{"entity_id": company}); merr == nil || merr.Body.Code != mcp.CodeEntityNotFound {
		t.Errorf("company as people agent = %+v, want ENTITY_NOT_FOUND", merr)
	}
	// Writing needs write consent: the person is readable, so the refusal
	// says so; nothing changes.
	if _, merr := e.callAs(t, people, "correct", map[string]any{"entity_id": person, "entity_type": "person", "field": "email", "value": "x@y.z"}); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
		t.Errorf("correct without write consent = %+v, want CONSENT_DENIED", merr)
	}
	// Field provenance names source material: it needs sources consent.
	if _, merr := e.callAs(t, people, "retrieve_field_provenance", map[string]any{"entity_id": person, "field": "name"}); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
		t.Errorf("field provenance without sources consent = %+v, want CONSENT_DENIED", merr)
	}
	// The neighbourhood leaves the sources out without sources consent.
	out, merr = e.callAs(t, people, "retrieve_graph_neighborhood", map[string]any{"node_id": person})
	if merr != nil || out["related_sources"] != nil {
		t.Errorf("neighbourhood without sources consent = %v, %v; want no related_sources", out["related_sources"], merr)
	}
}

func TestConsentTools(t *testing.T) {
	e := newEnv(t)
	e.agent(t, e.owner.UserID, "claude")
	out := e.mustCall(t, "set_consent_rule", map[string]any{"agent": "claude", "resource": "tables/meals", "action": "write", "effect": "allow"})
	rule := out["rule"].(map[string]any)
	if rule["resource"] != "entities/meals" || rule["agent"] != "claude" || rule["effect"] != "allow" {
		t.Errorf("set_consent_rule = %v", rule)
	}
	if _, merr := e.call(t, "set_consent_rule", map[string]any{"agent": "claude", "resource": "rows/x", "action": "read", "effect": "allow"}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("bad resource = %+v, want VALIDATION_ERROR", merr)
	}
	if _, merr := e.call(t, "set_consent_rule", map[string]any{"agent": "ghost", "resource": "graph", "action": "read", "effect": "allow"}); merr == nil || merr.Body.Code != mcp.CodeNotFound {
		t.Errorf("unknown agent = %+v, want NOT_FOUND", merr)
	}
	out = e.mustCall(t, "list_consent_rules", map[string]any{"agent": "claude"})
	if out["total"].(float64) != 1 {
		t.Errorf("list_consent_rules = %v", out)
	}
	e.mustCall(t, "delete_consent_rule", map[string]any{"rule_id": rule["id"]})
	if _, merr := e.call(t, "delete_consent_rule", map[string]any{"rule_id": rule["id"]}); merr == nil || merr.Body.Code != mcp.CodeNotFound {
		t.Errorf("second delete = %+v, want NOT_FOUND", merr)
	}
	if out := e.mustCall(t, "list_consent_rules", map[string]any{}); out["total"].(float64) != 0 {
		t.Errorf("after delete: %v", out)
	}
}

func TestAuditRecordsCallsAndDecisions(t *testing.T) {
	e := newEnv(t)
	_, person, _ := seed(t, e)
	people, _ := e.agent(t, e.owner.UserID, "people", [3]string{"read", "entities/person", "allow"})
	e.callAs(t, people, "retrieve_entities", map[string]any{})
	e.callAs(t, people, "retrieve_entity_snapshot", map[string]any{"entity_id": person})
	e.callAs(t, people, "list_relationships", map[string]any{"entity_id": person})
	if err := e.audit.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	out := e.mustCall(t, "query_audit_log", map[string]any{"agent": "people", "limit": 100})
	recs := out["records"].([]any)
	var calls, allowPerson, denyGraph, denyOther int
	for _, r := range recs {
		m := r.(map[string]any)
		if m["request_id"] == "" || m["transport"] != mcp.TransportInProc {
			t.Errorf("record without request id or transport: %v", m)
		}
		switch {
		case m["kind"] == consent.AuditCall:
			calls++
		case m["resource"] == "entities/person" && m["decision"] == "allow":
			allowPerson++
		case m["resource"] == "graph" && m["decision"] == "deny":
			denyGraph++
			if m["result_code"] != mcp.CodeConsentDenied || m["tool"] != "list_relationships" {
				t.Errorf("graph denial = %v", m)
			}
		case m["decision"] == "deny":
			denyOther++
		}
	}
	if calls != 3 || allowPerson < 2 || denyGraph != 1 || denyOther == 0 {
		t.Errorf("audit: %d calls, %d person allows, %d graph denials, %d other denials; want 3, ≥2, 1, ≥1\n%v", calls, allowPerson, denyGraph, denyOther, recs)
	}
	// The log names resources, never values.
	b, _ := json.Marshal(recs)
	for _, value := range []string{"Ada", "Lovelace", "ada@example.com", "Acme"} {
		if strings.Contains(string(b), value) {
			t.Errorf("the audit log holds the value %q", value)
		}
	}
}

// TestBudgetPaging stores more than a page holds and reads it back through
// continuation cursors: every page fits the budget asked for, and together
// the pages hold every entity exactly once.
// TestAuditFailureFailsTheCall checks that a call whose audit records
// cannot be written is not answered as a success, whatever it did.
func TestAuditFailureFailsTheCall(t *testing.T) {
	e := newEnv(t)
	e.mustCall(t, "list_entity_types", map[string]any{})
	if err := e.audit.Close(); err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]any{
		"list_entity_types": map[string]any{},
		"store":             map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}},
	} {
		_, merr := e.call(t, tool, args)
		if merr == nil || merr.Body.Code != mcp.CodeServiceUnavailable || merr.Status != 503 || merr.Body.TraceID == "" ||
			!strings.Contains(merr.Body.Message, "audit log") {
			t.Errorf("%s without an audit log = %+v, want 503 SERVICE_UNAVAILABLE naming the audit log, with a trace id", tool, merr)
		}
	}
}

func TestBudgetPaging(t *testing.T) {
	e := newEnv(t)
	var ents []any
	for i := range 40 {
		ents = append(ents, map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %02d", i), "email": fmt.Sprintf("p%02d@example.com", i)})
	}
	e.mustCall(t, "store", map[string]any{"entities": ents})
	const budget = 1500
	seen := map[string]int{}
	cursor := ""
	pages := 0
	for {
		args := map[string]any{"entity_type": "person", "max_response_bytes": budget}
		if cursor != "" {
			args["cursor"] = cursor
		}
		raw, _ := json.Marshal(args)
		out, merr := e.server.Invoke(t.Context(), e.owner, "retrieve_entities", raw)
		if merr != nil {
			t.Fatal(merr)
		}
		if len(out) > budget {
			t.Errorf("page %d is %d bytes, over the %d asked for", pages, len(out), budget)
		}
		var page struct {
			Entities []struct {
				ID string `json:"id"`
			} `json:"entities"`
			Total int      `json:"total"`
			Meta  mcp.Meta `json:"meta"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatal(err)
		}
		if page.Meta.RequestID == "" || page.Meta.BudgetBytes != budget || page.Meta.Bytes <= 0 || page.Total != 40 {
			t.Errorf("meta = %+v, total %d", page.Meta, page.Total)
		}
		for _, en := range page.Entities {
			seen[en.ID]++
		}
		pages++
		if !page.Meta.Truncated {
			break
		}
		if page.Meta.NextCursor == "" || len(page.Entities) == 0 || pages > 40 {
			t.Fatalf("truncated page %d without progress: %+v", pages, page.Meta)
		}
		cursor = page.Meta.NextCursor
	}
	if len(seen) != 40 || pages < 3 {
		t.Errorf("%d pages returned %d distinct entities, want 40 over several pages", pages, len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s returned %d times", id, n)
		}
	}
	// A cursor continues only the call it came from.
	if _, merr := e.call(t, "retrieve_entities", map[string]any{"entity_type": "company", "cursor": cursor}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("cursor of another call = %+v, want VALIDATION_ERROR", merr)
	}
	if _, merr := e.call(t, "retrieve_entities", map[string]any{"max_response_bytes": 10}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Errorf("max_response_bytes 10 = %+v, want VALIDATION_ERROR", merr)
	}
	// Without a budget asked for, a list tool stays near its own.
	out, _ := e.server.Invoke(t.Context(), e.owner, "retrieve_entities", json.RawMessage(`{}`))
	if len(out) > mcp.BudgetList {
		t.Errorf("default response is %d bytes, over the list budget %d", len(out), mcp.BudgetList)
	}
}

// A context load is audited as one consent record per kind of resource it
// was allowed (counting them) and one per denial (issue 35): not a record
// per entity type, most of them empty. The denials stay complete.
func TestContextLoadAuditsByKind(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	seed(t, e)
	reader, _ := e.agent(t, e.owner.UserID, "reader", [3]string{"read", "*", "allow"},
		[3]string{"read", "entities/invoice", "deny"}, [3]string{"read", "entities/person", "deny"})
	if _, merr := e.callAs(t, reader, "get_user_context", map[string]any{}); merr != nil {
		t.Fatal(merr)
	}
	if err := e.audit.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs := e.mustCall(t, "query_audit_log", map[string]any{"agent": "reader", "kind": consent.AuditDecision})["records"].([]any)
	entityAllows, denials := 0, map[string]bool{}
	for _, r := range recs {
		m := r.(map[string]any)
		switch {
		case m["decision"] == "deny":
			denials[m["resource"].(string)] = true
			if m["count"] != 1.0 {
				t.Errorf("a denial = %v, want count 1", m)
			}
		case strings.HasPrefix(m["resource"].(string), "entities/"):
			entityAllows++
			if m["resource"] != "entities/*" || m["count"].(float64) < 5 {
				t.Errorf("the entity types read = %v, want one entities/* record counting them", m)
			}
		}
	}
	if entityAllows != 1 || !denials["entities/invoice"] || !denials["entities/person"] || len(recs) > 6 {
		t.Errorf("a context load wrote %d consent records (%d for entity types read, denials %v), want one per kind and one per denial:\n%v",
			len(recs), entityAllows, denials, recs)
	}
}
