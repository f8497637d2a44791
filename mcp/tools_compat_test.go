package mcp_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// v0NoCounterpart are Neotoma v0's actions that Cairn does not serve
// (docs/compat.md says why), and the name v0.2.1 replaced.
var v0NoCounterpart = []string{
	"delete_record", "store_record", "list_provider_catalog", "sync_provider_imports",
	"plaid_create_link_token", "plaid_exchange_public_token", "plaid_sync", "plaid_list_items",
	"get_technical_metrics", "get_product_analytics",
}

// v0Aliases are the compat toolset's tools.
var v0Aliases = []string{"submit_payload", "get_entity_snapshot", "get_field_provenance", "retrieve_records",
	"update_record", "upload_file", "get_file_url"}

func toolNames(srv *mcp.Server) []string {
	var names []string
	for _, t := range srv.Tools() {
		names = append(names, t.Name())
	}
	return names
}

// The v0 names are the compat toolset: absent from the default tools/list
// and unknown to a default server (but get_file_url, which answered there
// before the toolset existed), listed when it is on; the v0 actions
// without a counterpart are unknown tools either way.
func TestCompatToolset(t *testing.T) {
	def, err := mcp.NewServer(mcp.Deps{}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range v0Aliases {
		if slices.Contains(toolNames(def), name) {
			t.Errorf("the default tools/list lists %s", name)
		}
		if name == "get_file_url" {
			continue
		}
		if _, merr := def.Invoke(t.Context(), consent.Principal{UserID: "u", Owner: true}, name, json.RawMessage(`{}`)); merr == nil || merr.Body.Code != mcp.CodeUnknownTool {
			t.Errorf("%s on a default server: %v, want %s", name, merr, mcp.CodeUnknownTool)
		}
	}
	compat, err := mcp.NewServer(mcp.Deps{}, mcp.Options{Toolsets: []mcp.Toolset{mcp.ToolsetCompat}})
	if err != nil {
		t.Fatal(err)
	}
	got, want := toolNames(compat), slices.Clone(v0Aliases)
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the compat toolset (-want +got):\n%s", diff)
	}
	// Over MCP too: tools/list of a server with every toolset lists them.
	e := newEnv(t)
	listed, err := e.connect(t).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var onWire []string
	for _, tool := range listed.Tools {
		onWire = append(onWire, tool.Name)
	}
	for _, name := range v0Aliases {
		if !slices.Contains(onWire, name) {
			t.Errorf("tools/list with the compat toolset lacks %s", name)
		}
	}
	for _, name := range v0NoCounterpart {
		if slices.Contains(onWire, name) {
			t.Errorf("tools/list lists %s, which has no counterpart", name)
		}
		if _, merr := e.call(t, name, map[string]any{}); merr == nil || merr.Body.Code != mcp.CodeUnknownTool {
			t.Errorf("%s: %v, want %s", name, merr, mcp.CodeUnknownTool)
		}
	}
}

// keys are the keys of an answer but meta.
func keys(m map[string]any) []string {
	ks := slices.Sorted(maps.Keys(m))
	return slices.DeleteFunc(ks, func(k string) bool { return k == "meta" })
}

// invoiceBody is the body of v0's submit_payload example (§3.1).
func invoiceBody(number string) map[string]any {
	return map[string]any{"invoice_number": number, "amount": 1500.0, "vendor_name": "Acme Corp", "customer_name": "Test Customer", "date": "2025-01-15"}
}

func submitArgs(capability string, body map[string]any) map[string]any {
	return map[string]any{"capability_id": capability, "body": body, "provenance": map[string]any{
		"source_refs": []string{}, "extracted_at": "2025-01-15T10:30:00Z", "extractor_version": "neotoma-mcp:v0.2.1", "agent_id": "claude-3-opus"}}
}

// Each alias answers v0's shape for what the Cairn tool behind it answers,
// on a store and read round trip.
func TestCompatRoundTrip(t *testing.T) {
	e := newEnv(t)
	sub := e.mustCall(t, "submit_payload", submitArgs("neotoma:store_invoice:v1", invoiceBody("INV-001")))
	if diff := cmp.Diff([]string{"created", "message", "payload_content_id", "payload_id", "payload_submission_id"}, keys(sub)); diff != "" {
		t.Fatalf("submit_payload's answer is not v0's (-want +got):\n%s", diff)
	}
	if sub["created"] != true || sub["payload_id"] == "" || sub["payload_submission_id"] == "" {
		t.Fatalf("submit_payload = %v", sub)
	}
	again := e.mustCall(t, "submit_payload", submitArgs("neotoma:store_invoice:v1", invoiceBody("INV-001")))
	if again["created"] != false || again["payload_id"] != sub["payload_id"] || again["payload_content_id"] != sub["payload_content_id"] {
		t.Errorf("the same payload again = %v, want created false and the first one's ids (%v)", again, sub)
	}

	recs := e.mustCall(t, "retrieve_records", map[string]any{"type": "invoice"})
	ents := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "invoice"})
	if recs["total"] != ents["total"] || len(recs["records"].([]any)) != 1 {
		t.Fatalf("retrieve_records = %v, retrieve_entities = %v", recs, ents)
	}
	rec, ent := recs["records"].([]any)[0].(map[string]any), ents["entities"].([]any)[0].(map[string]any)
	if diff := cmp.Diff([]string{"created_at", "file_urls", "id", "properties", "type", "updated_at"}, keys(rec)); diff != "" {
		t.Errorf("a record is not v0's (-want +got):\n%s", diff)
	}
	props := map[string]any{}
	if raw, ok := ent["raw_fields"].(map[string]any); ok {
		maps.Copy(props, raw)
	}
	maps.Copy(props, ent["snapshot"].(map[string]any))
	if rec["id"] != ent["id"] || rec["type"] != "invoice" || rec["updated_at"] != ent["last_observation_at"] || rec["created_at"] == "" {
		t.Errorf("record %v of entity %v", rec, ent)
	}
	if diff := cmp.Diff(props, rec["properties"]); diff != "" {
		t.Errorf("a record's properties are the snapshot and raw fields (-want +got):\n%s", diff)
	}
	for k, v := range invoiceBody("INV-001") {
		if rec["properties"].(map[string]any)[k] != v {
			t.Errorf("property %s = %v, the payload said %v", k, rec["properties"].(map[string]any)[k], v)
		}
	}
	searched := e.mustCall(t, "retrieve_records", map[string]any{"search": []string{"INV-001"}, "search_mode": "keyword"})
	if searched["total"] != 1.0 || searched["records"].([]any)[0].(map[string]any)["id"] != rec["id"] {
		t.Errorf("retrieve_records searching INV-001 = %v", searched)
	}
	id := rec["id"].(string)

	snap := e.mustCall(t, "get_entity_snapshot", map[string]any{"entity_id": id})
	cairnSnap := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
	v0Keys := []string{"computed_at", "entity_id", "entity_type", "last_observation_at", "observation_count", "provenance", "schema_version", "snapshot"}
	if _, ok := cairnSnap["raw_fields"]; ok {
		v0Keys = append(v0Keys, "raw_fields")
		sort.Strings(v0Keys)
	}
	if diff := cmp.Diff(v0Keys, keys(snap)); diff != "" {
		t.Errorf("get_entity_snapshot's answer is not v0's (-want +got):\n%s", diff)
	}
	for _, k := range v0Keys {
		if k != "computed_at" && !cmp.Equal(snap[k], cairnSnap[k]) {
			t.Errorf("get_entity_snapshot %s = %v, retrieve_entity_snapshot says %v", k, snap[k], cairnSnap[k])
		}
	}

	prov := e.mustCall(t, "get_field_provenance", map[string]any{"entity_id": id, "field": "amount"})
	cairnProv := e.mustCall(t, "retrieve_field_provenance", map[string]any{"entity_id": id, "field": "amount"})
	if diff := cmp.Diff([]string{"field", "observed_at", "source_observation", "source_record", "value"}, keys(prov)); diff != "" {
		t.Errorf("get_field_provenance's answer is not v0's (-want +got):\n%s", diff)
	}
	obs, src := prov["source_observation"].(map[string]any), prov["source_record"].(map[string]any)
	cairnObs, cairnSrc := cairnProv["source_observation"].(map[string]any), cairnProv["source_material"].(map[string]any)
	if prov["value"] != cairnProv["value"] || obs["id"] != cairnObs["id"] || obs["source_record_id"] != cairnObs["source_id"] ||
		src["id"] != sub["payload_id"] || src["type"] != cairnSrc["kind"] || src["created_at"] != cairnSrc["created_at"] {
		t.Errorf("get_field_provenance = %v, retrieve_field_provenance = %v", prov, cairnProv)
	}

	upd := e.mustCall(t, "update_record", map[string]any{"id": id, "type": "invoice", "properties": map[string]any{"amount": 2000, "status": "paid"}})
	if diff := cmp.Diff(keys(rec), keys(upd)); diff != "" {
		t.Errorf("update_record's answer is not v0's record (-want +got):\n%s", diff)
	}
	after := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
	if upd["id"] != id || upd["created_at"] != rec["created_at"] || !cmp.Equal(upd["properties"].(map[string]any)["amount"], after["snapshot"].(map[string]any)["amount"]) ||
		after["snapshot"].(map[string]any)["amount"] != 2000.0 || after["snapshot"].(map[string]any)["status"] != "paid" {
		t.Errorf("update_record = %v; the snapshot after = %v", upd, after["snapshot"])
	}
	if p := e.mustCall(t, "get_field_provenance", map[string]any{"entity_id": id, "field": "amount"}); p["source_record"].(map[string]any)["type"] != "correction" {
		t.Errorf("an updated field's provenance = %v, want the correction", p)
	}

	for name, tc := range map[string]struct {
		tool string
		args map[string]any
		code string
	}{
		"unknown capability":   {"submit_payload", submitArgs("neotoma:store_widget:v1", invoiceBody("W-1")), mcp.CodeUnknownCapability},
		"body of another type": {"submit_payload", submitArgs("neotoma:store_note:v1", map[string]any{"entity_type": "invoice"}), mcp.CodeValidation},
		"missing provenance":   {"submit_payload", map[string]any{"capability_id": "neotoma:store_note:v1", "body": map[string]any{}}, mcp.CodeValidation},
		"unknown entity":       {"get_entity_snapshot", map[string]any{"entity_id": "ent_nope"}, mcp.CodeEntityNotFound},
		"unknown field":        {"get_field_provenance", map[string]any{"entity_id": id, "field": "nope"}, mcp.CodeFieldNotFound},
		"unknown record":       {"update_record", map[string]any{"id": "ent_nope", "properties": map[string]any{"a": 1}}, mcp.CodeRecordNotFound},
		"a type change":        {"update_record", map[string]any{"id": id, "type": "note"}, mcp.CodeValidation},
		"an embedding":         {"update_record", map[string]any{"id": id, "embedding": []float64{0.1}}, mcp.CodeValidation},
		"a property filter":    {"retrieve_records", map[string]any{"properties": map[string]any{"amount": 1}}, mcp.CodeValidation},
		"a threshold":          {"retrieve_records", map[string]any{"similarity_threshold": 0.7}, mcp.CodeValidation},
		"a search mode typo":   {"retrieve_records", map[string]any{"search": []string{"x"}, "search_mode": "fuzzy"}, mcp.CodeValidation},
	} {
		if _, merr := e.call(t, tc.tool, tc.args); merr == nil || merr.Body.Code != tc.code {
			t.Errorf("%s: %s = %v, want %s", name, tc.tool, merr, tc.code)
		}
	}
}

// upload_file is store with file_path: on stdio, under the file roots; its
// file is then get_file_url's.
func TestCompatUploadFile(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	path := filepath.Join(root, "plan.md")
	if err := os.WriteFile(path, []byte("# Plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: e.know, Files: e.files, FileRoots: []string{root}}, mcp.Options{Toolsets: []mcp.Toolset{mcp.ToolsetCompat}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any) (map[string]any, *mcp.Error) {
		raw, _ := json.Marshal(args)
		r := srv.Handle(t.Context(), mcp.Request{Principal: e.owner, Tool: tool, Args: raw, Transport: mcp.TransportStdio})
		if r.Err != nil {
			return nil, r.Err
		}
		checkOutput(t, srv, tool, r.Output)
		var m map[string]any
		if err := json.Unmarshal(r.Output, &m); err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	up, merr := call("upload_file", map[string]any{"file_path": path, "bucket": "files"})
	if merr != nil {
		t.Fatal(merr)
	}
	if diff := cmp.Diff([]string{"content_type", "file_size", "file_url"}, keys(up)); diff != "" {
		t.Errorf("upload_file's answer is not v0's (-want +got):\n%s", diff)
	}
	if up["content_type"] != "text/markdown" || up["file_size"] != 7.0 {
		t.Errorf("upload_file = %v", up)
	}
	u, merr := call("get_file_url", map[string]any{"file_path": up["file_url"], "expires_in": 60})
	if merr != nil || u["signed_url"] == "" || u["expires_at"] == "" {
		t.Fatalf("get_file_url of the upload = %v, %v", u, merr)
	}
	for name, tc := range map[string]struct {
		args map[string]any
		code string
	}{
		"missing":     {map[string]any{"file_path": filepath.Join(root, "nope.md")}, mcp.CodeFileNotFound},
		"outside":     {map[string]any{"file_path": "/etc/passwd"}, mcp.CodeValidation},
		"a record_id": {map[string]any{"file_path": path, "record_id": "ent_x"}, mcp.CodeValidation},
		"properties":  {map[string]any{"file_path": path, "properties": "{}"}, mcp.CodeValidation},
	} {
		if _, merr := call("upload_file", tc.args); merr == nil || merr.Body.Code != tc.code {
			t.Errorf("%s: %v, want %s", name, merr, tc.code)
		}
	}
}

// An agent denied a type is refused or filtered through every alias just
// as through the Cairn tool behind it, and the alias's call is audited
// under its own name with the decisions it made.
func TestCompatConsent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b})
		e.mustCall(t, "submit_payload", submitArgs("neotoma:store_invoice:v1", invoiceBody("INV-7")))
		e.mustCall(t, "submit_payload", submitArgs("neotoma:store_note:v1", map[string]any{"title": "Call Ada", "content": "about INV-7"}))
		invoice := e.mustCall(t, "retrieve_records", map[string]any{"type": "invoice"})["records"].([]any)[0].(map[string]any)["id"].(string)
		agent, _ := e.agent(t, e.owner.UserID, "notes-only",
			[3]string{"read", "entities/note", "allow"}, [3]string{"write", "entities/note", "allow"}, [3]string{"read", "sources", "allow"})

		// Refused alike.
		for _, pair := range []struct {
			alias, cairn         string
			aliasArgs, cairnArgs map[string]any
		}{
			{"submit_payload", "store", submitArgs("neotoma:store_invoice:v1", invoiceBody("INV-8")),
				map[string]any{"entities": []any{map[string]any{"entity_type": "invoice", "invoice_number": "INV-8", "vendor_name": "Acme Corp"}}}},
			{"get_entity_snapshot", "retrieve_entity_snapshot", map[string]any{"entity_id": invoice}, map[string]any{"entity_id": invoice}},
			{"get_field_provenance", "retrieve_field_provenance", map[string]any{"entity_id": invoice, "field": "amount"},
				map[string]any{"entity_id": invoice, "field": "amount"}},
		} {
			_, aliasErr := e.callAs(t, agent, pair.alias, pair.aliasArgs)
			_, cairnErr := e.callAs(t, agent, pair.cairn, pair.cairnArgs)
			if aliasErr == nil || cairnErr == nil || aliasErr.Body.Code != cairnErr.Body.Code {
				t.Errorf("%s as an agent denied invoices: %v; %s: %v", pair.alias, aliasErr, pair.cairn, cairnErr)
			}
		}
		if _, merr := e.callAs(t, agent, "update_record", map[string]any{"id": invoice, "properties": map[string]any{"amount": 1}}); merr == nil {
			t.Error("update_record changed an invoice for an agent denied invoices")
		}
		if _, merr := e.callAs(t, agent, "correct", map[string]any{"entity_id": invoice, "entity_type": "invoice", "field": "amount", "value": 1}); merr == nil {
			t.Error("correct changed an invoice for an agent denied invoices")
		}
		if got := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": invoice})["snapshot"].(map[string]any)["amount"]; got != 1500.0 {
			t.Errorf("the invoice's amount is %v after the denied updates", got)
		}

		// Filtered alike.
		recs, merr := e.callAs(t, agent, "retrieve_records", map[string]any{"limit": 100})
		if merr != nil {
			t.Fatal(merr)
		}
		ents, merr := e.callAs(t, agent, "retrieve_entities", map[string]any{"limit": 100})
		if merr != nil {
			t.Fatal(merr)
		}
		var recIDs, entIDs []string
		for _, r := range recs["records"].([]any) {
			rec := r.(map[string]any)
			recIDs = append(recIDs, rec["id"].(string))
			if rec["type"] != "note" {
				t.Errorf("retrieve_records showed an agent denied invoices a %v", rec["type"])
			}
		}
		for _, en := range ents["entities"].([]any) {
			entIDs = append(entIDs, en.(map[string]any)["id"].(string))
		}
		if len(recIDs) == 0 || !cmp.Equal(recIDs, entIDs) || recs["total"] != ents["total"] {
			t.Errorf("retrieve_records shows %v (total %v), retrieve_entities %v (total %v)", recIDs, recs["total"], entIDs, ents["total"])
		}

		if err := e.audit.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		audited, err := e.control.QueryAudit(t.Context(), consent.AuditQuery{UserID: e.owner.UserID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		denied := false
		for _, r := range audited {
			denied = denied || (r.Tool == "get_entity_snapshot" && r.AgentName == "notes-only" && r.Kind == consent.AuditDecision &&
				r.Resource == "entities/invoice" && r.Decision == consent.Deny)
		}
		if !denied {
			t.Error("the audit log lacks get_entity_snapshot's denied read of entities/invoice")
		}
	})
}

// An alias counts against its Cairn tool's rate class, and its answer is
// fitted to the same budget, continued by the cursor.
func TestCompatRateLimitAndBudget(t *testing.T) {
	e := newEnvWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassDefault: 1000, consent.RateClassStore: 3}})
	// Limits are per key: an agent's, as the owner in-process has none.
	p, _ := e.agent(t, e.owner.UserID, "v0-client", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"})
	for _, title := range []string{"note a", "note b"} {
		if _, merr := e.callAs(t, p, "submit_payload", submitArgs("neotoma:store_note:v1", map[string]any{"title": title, "content": "a note long enough to fill some of the budget"})); merr != nil {
			t.Fatal(merr)
		}
	}
	if _, merr := e.callAs(t, p, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "note", "title": "note c"}}}); merr != nil {
		t.Fatal(merr)
	}
	// The store class is spent by submit_payload and store alike.
	if _, merr := e.callAs(t, p, "submit_payload", submitArgs("neotoma:store_note:v1", map[string]any{"title": "one too many"})); merr == nil || merr.Body.Code != mcp.CodeRateLimited {
		t.Errorf("a fourth store-class call through submit_payload: %v, want %s", merr, mcp.CodeRateLimited)
	}

	var seen []string
	args := map[string]any{"type": "note", "max_response_bytes": mcp.MinResponseBytes}
	pages := 0
	for page := 0; ; page++ {
		pages++
		out := e.mustCall(t, "retrieve_records", args)
		for _, r := range out["records"].([]any) {
			seen = append(seen, r.(map[string]any)["id"].(string))
		}
		next, _ := out["meta"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatal("the cursor does not end")
		}
		args["cursor"] = next
	}
	all := e.mustCall(t, "retrieve_records", map[string]any{"type": "note"})
	var want []string
	for _, r := range all["records"].([]any) {
		want = append(want, r.(map[string]any)["id"].(string))
	}
	if pages < 2 {
		t.Errorf("three records fitted one page of %d bytes; the budget was not applied", mcp.MinResponseBytes)
	}
	if len(want) != 3 || !cmp.Equal(seen, want) {
		t.Errorf("retrieve_records paged under the smallest budget gave %v, in one page %v", seen, want)
	}
}
