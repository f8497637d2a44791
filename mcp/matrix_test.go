package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// fixture is one user's data, stored with distinct values so that a leak
// shows as a value in an answer.
type fixture struct {
	tag                                string
	company, company2, person, invoice string
	relationship, source               string
	contradiction                      string   // an open contradiction on the person's email
	claim, claimMemory                 string   // a memory's claim on the person's email, and that memory
	memory, insight                    string   // a memory about the company, an insight from the source
	recipe                             string   // an entity of a type the user's first store of it created
	user                               string   // the user's id
	file, job                          string   // a stored file, and the job that interpreted it
	values                             []string // every stored value that must not leak
}

func seedUser(t testing.TB, e *env, owner consent.Principal, tag string) fixture {
	t.Helper()
	f := fixture{tag: tag, user: owner.UserID}
	f.values = []string{"Acme-" + tag, "Acme Two-" + tag, "Ada-" + tag, "ada-" + tag + "@example.com", "INV-" + tag, "Vendor-" + tag}
	out, merr := e.callAs(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": f.values[0]},
		map[string]any{"entity_type": "company", "name": f.values[1]},
		map[string]any{"entity_type": "person", "name": f.values[2], "email": f.values[3]},
		map[string]any{"entity_type": "invoice", "invoice_number": f.values[4], "vendor_name": f.values[5], "issue_date": "2026-01-15", "amount": 777.25},
	}})
	if merr != nil {
		t.Fatal(merr)
	}
	f.source = out["source_id"].(string)
	ids := []*string{&f.company, &f.company2, &f.person, &f.invoice}
	for i, en := range out["entities"].([]any) {
		*ids[i] = en.(map[string]any)["entity_id"].(string)
	}
	out, merr = e.callAs(t, owner, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": f.person, "target_entity_id": f.company})
	if merr != nil {
		t.Fatal(merr)
	}
	f.relationship = out["id"].(string)
	// A profile, and a second source that contradicts the person's email.
	nick, other := "Nick-"+tag, "other-"+tag+"@example.com"
	f.values = append(f.values, nick, other)
	if _, merr := e.callAs(t, owner, "update_profile", map[string]any{"data": map[string]any{"nickname": nick}}); merr != nil {
		t.Fatal(merr)
	}
	if _, merr := e.callAs(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": f.values[2], "email": other},
	}}); merr != nil {
		t.Fatal(merr)
	}
	out, merr = e.callAs(t, owner, "review_memories", map[string]any{"action": "list"})
	if merr != nil {
		t.Fatal(merr)
	}
	if cs := out["contradictions"].([]any); len(cs) > 0 {
		f.contradiction = cs[0].(map[string]any)["contradiction_id"].(string)
	}
	// A memory linked to the company and the source, and an insight.
	memo, insight := "Memo-"+tag+" about the supplier", "Insight-"+tag+" on the contract"
	f.values = append(f.values, memo, insight)
	out, merr = e.callAs(t, owner, "save_memory", map[string]any{"collection": "notes", "text": memo,
		"entity_ids": []any{f.company}, "source_id": f.source})
	if merr != nil {
		t.Fatal(merr)
	}
	f.memory = out["id"].(string)
	out, merr = e.callAs(t, owner, "store_insight", map[string]any{"fileId": f.source,
		"insight": map[string]any{"title": insight, "content": insight + " in full", "sourceLLM": "probe-llm"}})
	if merr != nil {
		t.Fatal(merr)
	}
	f.insight = out["insightId"].(string)
	// A recipe: a type no schema describes, so the store creates the
	// user's own schema; its cuisine stays a raw fragment.
	dish, cuisine := "Recipe-"+tag, "Cuisine-"+tag
	f.values = append(f.values, dish, cuisine)
	out, merr = e.callAs(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "recipe", "name": dish, "cuisine": cuisine},
	}})
	if merr != nil {
		t.Fatal(merr)
	}
	f.recipe = out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	// A memory that claims another email for the person.
	claimText, claimed := "Claim-"+tag+" on the email", "claimed-"+tag+"@example.com"
	f.values = append(f.values, claimText, claimed)
	out, merr = e.callAs(t, owner, "save_memory", map[string]any{"collection": "notes", "text": claimText,
		"claims": []any{map[string]any{"entity_id": f.person, "field": "email", "value": claimed}}})
	if merr != nil {
		t.Fatal(merr)
	}
	f.claimMemory = out["id"].(string)
	if ids, _ := out["contradiction_ids"].([]any); len(ids) == 1 {
		f.claim = ids[0].(string)
	} else {
		t.Fatalf("the claim raised %v, want one contradiction", out["contradiction_ids"])
	}
	// A file, interpreted (into a note and a memory) before the fixture is
	// used, so that nothing changes under the attacks.
	fileText := "Filed-" + tag + " minutes of the board"
	f.values = append(f.values, fileText)
	out, merr = e.callAs(t, owner, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString([]byte("# " + fileText + "\n")),
		"mime_type": "text/markdown", "original_filename": "board-" + tag + ".md"})
	if merr != nil {
		t.Fatal(merr)
	}
	f.file, f.job = out["source_id"].(string), out["job_id"].(string)
	waitJobDone(t, e, owner, f.job)
	return f
}

// waitJobDone polls a job until it has finished.
func waitJobDone(t testing.TB, e *env, p consent.Principal, id string) map[string]any {
	t.Helper()
	for range 600 {
		out, merr := e.callAs(t, p, "get_job", map[string]any{"job_id": id})
		if merr != nil {
			t.Fatal(merr)
		}
		switch out["status"] {
		case "succeeded", "failed", "cancelled":
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish", id)
	return nil
}

// secrets are what must never appear in an answer to another principal:
// the fixture's values and ids, unless the caller sent them.
func (f fixture) secrets(args map[string]any) []string {
	sent, _ := json.Marshal(args)
	out := slices.DeleteFunc(slices.Clone(f.values), func(v string) bool { return strings.Contains(string(sent), v) })
	for _, id := range []string{f.company, f.company2, f.person, f.invoice, f.relationship, f.source, f.contradiction, f.memory, f.insight, f.claim, f.claimMemory,
		f.recipe, f.file, f.job} {
		if id == "" {
			continue
		}
		if !strings.Contains(string(sent), id) {
			out = append(out, id)
		}
	}
	return out
}

// matrixCase says how to call a tool on a fixture's data.
type matrixCase struct {
	args func(f fixture) map[string]any
	// ownerOnly tools are checked against the owner's consent data.
	ownerOnly bool
	// alsoRefuses are codes besides refusals that this tool answers an
	// attacker: a user_id argument naming another user is refused as a
	// VALIDATION_ERROR (the user comes from the key).
	alsoRefuses []string
	// found are error codes that still prove, in the positive control,
	// that the call reached the caller's own data (cancel_job of a job
	// that has finished).
	found []string
}

// consentMatrix has one entry per tool. TestConsentMatrixCoversEveryTool
// fails when a tool is added without one: add it here with arguments that
// aim at the fixture's data.
var consentMatrix = map[string]matrixCase{
	"store": {args: func(f fixture) map[string]any {
		return map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Probe Co"}}}
	}},
	"list_entity_types":             {args: func(f fixture) map[string]any { return map[string]any{} }},
	"retrieve_entity_snapshot":      {args: func(f fixture) map[string]any { return map[string]any{"entity_id": f.company} }},
	"retrieve_entities":             {args: func(f fixture) map[string]any { return map[string]any{} }},
	"retrieve_entity_by_identifier": {args: func(f fixture) map[string]any { return map[string]any{"identifier": f.values[0]} }},
	"list_observations":             {args: func(f fixture) map[string]any { return map[string]any{"entity_id": f.person} }},
	"retrieve_field_provenance": {args: func(f fixture) map[string]any {
		return map[string]any{"entity_id": f.person, "field": "email"}
	}},
	"correct": {args: func(f fixture) map[string]any {
		return map[string]any{"entity_id": f.company, "entity_type": "company", "field": "name", "value": "Hacked"}
	}},
	"merge_entities": {args: func(f fixture) map[string]any {
		return map[string]any{"from_entity_id": f.company2, "to_entity_id": f.company}
	}},
	"erase": {args: func(f fixture) map[string]any {
		return map[string]any{"kind": "entity", "ids": []any{f.person}, "reason": "probe"}
	}},
	"retract": {args: func(f fixture) map[string]any {
		return map[string]any{"source_id": f.source, "reason": "probe"}
	}},
	"list_timeline_events": {args: func(f fixture) map[string]any { return map[string]any{} }},
	"create_relationship": {args: func(f fixture) map[string]any {
		return map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": f.invoice, "target_entity_id": f.company}
	}},
	"create_relationships": {args: func(f fixture) map[string]any {
		// A new edge, and one that would close a cycle with person
		// PART_OF company: its path must not show the attacker A's data.
		return map[string]any{"relationships": []any{
			map[string]any{"relationship_type": "REFERS_TO", "source_entity_id": f.invoice, "target_entity_id": f.company},
			map[string]any{"relationship_type": "PART_OF", "source_entity_id": f.company, "target_entity_id": f.person},
		}}
	}},
	"delete_relationship": {args: func(f fixture) map[string]any {
		return map[string]any{"relationship_type": "PART_OF", "source_entity_id": f.person, "target_entity_id": f.company}
	}},
	"list_relationships": {args: func(f fixture) map[string]any { return map[string]any{"entity_id": f.person} }},
	"get_relationship_snapshot": {args: func(f fixture) map[string]any {
		return map[string]any{"relationship_type": "PART_OF", "source_entity_id": f.person, "target_entity_id": f.company}
	}},
	"retrieve_related_entities": {args: func(f fixture) map[string]any {
		return map[string]any{"entity_id": f.person, "max_hops": 3}
	}},
	"retrieve_graph_neighborhood": {args: func(f fixture) map[string]any { return map[string]any{"node_id": f.person} }},
	"query_graph": {args: func(f fixture) map[string]any {
		return map[string]any{"queryType": "traverse", "entityId": f.person, "maxHops": 3}
	}},
	"get_user_context": {args: func(f fixture) map[string]any { return map[string]any{"topic": f.values[0]} }},
	"update_profile": {args: func(f fixture) map[string]any {
		return map[string]any{"data": map[string]any{"probe": "written by the caller"}, "reason": "matrix"}
	}},
	"review_memories": {args: func(f fixture) map[string]any {
		return map[string]any{"action": "resolve", "contradiction_id": f.contradiction, "resolution": "keep_both"}
	}},
	"save_memory": {args: func(f fixture) map[string]any {
		return map[string]any{"collection": "notes", "text": "probe memory",
			"claims": []any{map[string]any{"entity_id": f.company, "field": "industry", "value": "probing"}}}
	}},
	"save_memories": {args: func(f fixture) map[string]any {
		return map[string]any{"memories": []any{map[string]any{"collection": "notes", "text": "probe memory", "entity_ids": []any{f.company}}}}
	}},
	"search_memory": {args: func(f fixture) map[string]any {
		return map[string]any{"collection": "notes", "query": "Memo-" + f.tag + " supplier", "minSimilarity": 0}
	}},
	"update_memory": {args: func(f fixture) map[string]any {
		return map[string]any{"memory_id": f.memory, "text": "Hacked memory", "reason": "probe"}
	}},
	"delete_memory": {args: func(f fixture) map[string]any {
		return map[string]any{"memory_ids": []any{f.memory, f.claimMemory}, "mode": "erase", "reason": "probe"}
	}},
	"store_insight": {args: func(f fixture) map[string]any {
		return map[string]any{"fileId": f.source, "insight": map[string]any{"title": "probe", "content": "probe insight", "sourceLLM": "probe"}}
	}},
	"query_insights": {args: func(f fixture) map[string]any {
		return map[string]any{"filters": map[string]any{"keywords": "Insight-" + f.tag}}
	}},
	"retrieve_file_url": {args: func(f fixture) map[string]any { return map[string]any{"file_path": f.file} }},
	"arkiver_process_file": {args: func(f fixture) map[string]any {
		return map[string]any{"fileId": f.file, "processingSettings": map[string]any{"extractionMode": "standard"}}
	}},
	"arkiver_job_status": {args: func(f fixture) map[string]any { return map[string]any{"jobId": f.job} }},
	"get_job":            {args: func(f fixture) map[string]any { return map[string]any{"job_id": f.job} }},
	"list_jobs":          {args: func(f fixture) map[string]any { return map[string]any{} }},
	"list_sources":       {args: func(f fixture) map[string]any { return map[string]any{} }},
	"cancel_job":         {found: []string{mcp.CodeJobCompleted}, args: func(f fixture) map[string]any { return map[string]any{"job_id": f.job} }},
	"reinterpret": {args: func(f fixture) map[string]any {
		return map[string]any{"source_id": f.file, "interpretation_config": map[string]any{"code_version": "probe"}}
	}},
	"list_consent_rules": {ownerOnly: true, args: func(f fixture) map[string]any { return map[string]any{} }},
	"set_consent_rule": {ownerOnly: true, args: func(f fixture) map[string]any {
		return map[string]any{"agent": "spy", "resource": "*", "action": "read", "effect": "allow"}
	}},
	"delete_consent_rule": {ownerOnly: true, args: func(f fixture) map[string]any { return map[string]any{"rule_id": "rule_x"} }},
	"query_audit_log":     {ownerOnly: true, args: func(f fixture) map[string]any { return map[string]any{} }},
	"register_schema": {alsoRefuses: []string{mcp.CodeValidation}, args: func(f fixture) map[string]any {
		return map[string]any{"entity_type": "recipe", "user_specific": true, "user_id": f.user, "schema_version": "2.0", "activate": true,
			"schema_definition": map[string]any{"fields": map[string]any{"name": map[string]any{"type": "string"}, "cuisine": map[string]any{"type": "string"}},
				"identity_fields": []any{"name"}},
			"reducer_config": map[string]any{"merge_policies": map[string]any{}}}
	}},
	"update_schema_incremental": {alsoRefuses: []string{mcp.CodeValidation}, args: func(f fixture) map[string]any {
		return map[string]any{"entity_type": "recipe", "user_specific": true, "user_id": f.user, "migrate_existing": true,
			"fields_to_add": []any{map[string]any{"field_name": "cuisine", "field_type": "string"}}}
	}},
	"analyze_schema_candidates":  {args: func(f fixture) map[string]any { return map[string]any{"min_frequency": 1, "min_confidence": 0} }},
	"get_schema_recommendations": {args: func(f fixture) map[string]any { return map[string]any{"entity_type": "recipe", "status": "all"} }},
	"list_tables":                {args: func(f fixture) map[string]any { return map[string]any{} }},
	"query_table":                {args: func(f fixture) map[string]any { return map[string]any{"tableName": "recipe"} }},
	"add_record": {args: func(f fixture) map[string]any {
		return map[string]any{"tableName": "company", "data": map[string]any{"name": "Probe Co"}}
	}},
	// The compat toolset's aliases of Neotoma v0 names.
	"submit_payload": {args: func(f fixture) map[string]any {
		return submitArgs("neotoma:store_note:v1", map[string]any{"title": "Probe note"})
	}},
	"get_entity_snapshot": {args: func(f fixture) map[string]any { return map[string]any{"entity_id": f.company} }},
	"get_field_provenance": {args: func(f fixture) map[string]any {
		return map[string]any{"entity_id": f.person, "field": "email"}
	}},
	"retrieve_records": {args: func(f fixture) map[string]any { return map[string]any{} }},
	// An entity the caller may not read is a record not found in v0's words.
	"update_record": {alsoRefuses: []string{mcp.CodeRecordNotFound}, args: func(f fixture) map[string]any {
		return map[string]any{"id": f.company, "properties": map[string]any{"name": "Hacked"}}
	}},
	// upload_file reads the server's own disk, under --file-roots, which
	// this server has none of: every caller is refused alike, and
	// TestCompatUploadFile covers a server with roots.
	"upload_file": {alsoRefuses: []string{mcp.CodeValidation}, found: []string{mcp.CodeValidation},
		args: func(f fixture) map[string]any { return map[string]any{"file_path": "/etc/hostname"} }},
	"get_file_url": {args: func(f fixture) map[string]any { return map[string]any{"file_path": f.file} }},
}

func TestConsentMatrixCoversEveryTool(t *testing.T) {
	for _, tool := range mcp.AllTools(mcp.Deps{}) {
		if _, ok := consentMatrix[tool.Name()]; !ok {
			t.Errorf("tool %s has no entry in consentMatrix (matrix_test.go): add one so that its consent and isolation are proven", tool.Name())
		}
		if tool.OwnerOnly != consentMatrix[tool.Name()].ownerOnly {
			t.Errorf("tool %s: owner-only is %v, the matrix says %v", tool.Name(), tool.OwnerOnly, consentMatrix[tool.Name()].ownerOnly)
		}
	}
}

// refusals are the codes an attacker may get: denied, or not found.
var refusals = []string{mcp.CodeConsentDenied, mcp.CodeForbidden, mcp.CodeEntityNotFound, mcp.CodeNotFound, mcp.CodeSourceNotFound, mcp.CodeFieldNotFound,
	mcp.CodeFileNotFound, mcp.CodeJobNotFound}

// TestConsentMatrix (the BOLA matrix) calls every tool on user A's data as
// three principals that must not see it: an agent of A without consent, an
// agent of A allowed only people and the graph (aimed at companies and
// invoices), and an agent of user B with full consent on B's own data. Each
// gets not-found or a denial, or an answer without A's values and ids; A's
// data is unchanged afterwards. A positive control runs each tool as a
// fully allowed agent on its own fresh data, so that the matrix cannot pass
// because a tool is broken.
func TestConsentMatrix(t *testing.T) {
	e := newEnvWith(t, envOptions{contextStores: true})
	a := seedUser(t, e, e.owner, "A")
	ctx := t.Context()
	bob, err := e.control.CreateUser(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	bobFull, _ := e.agent(t, bob.ID, "bobby", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"}, [3]string{"delete", "*", "allow"})
	seedUser(t, e, bobFull, "B")
	none, _ := e.agent(t, e.owner.UserID, "none")
	partial, _ := e.agent(t, e.owner.UserID, "partial", [3]string{"read", "entities/person", "allow"}, [3]string{"read", "graph", "allow"})
	e.agent(t, e.owner.UserID, "spy")
	// Derived data: an agent that may read everything but notes must not
	// read the text of the fixture's file, which its interpretation found
	// to be a note, through its memory, its job or its file.
	noNotes, _ := e.agent(t, e.owner.UserID, "no-notes", [3]string{"read", "*", "allow"}, [3]string{"read", "entities/note", "deny"})

	before := ownerView(t, e, a)
	attackers := []struct {
		name string
		p    consent.Principal
		// secrets this attacker must not see
		secrets func(args map[string]any) []string
	}{
		{"agent without consent", none, a.secrets},
		{"other user's agent", bobFull, a.secrets},
		{"agent allowed people only", partial, func(args map[string]any) []string {
			// The person is readable; the companies and the invoice are not.
			// A claim about the person is the person's data: its value is
			// shown, but not the memory that states it (the agent may not
			// read memories).
			all := a.secrets(args)
			claimed := a.values[len(a.values)-1]
			return slices.DeleteFunc(all, func(s string) bool {
				return s == a.person || s == a.values[2] || s == a.values[3] || s == a.values[7] || s == a.contradiction || s == a.relationship || s == a.source ||
					s == a.claim || s == claimed
			})
		}},
	}
	attackers = append(attackers, struct {
		name    string
		p       consent.Principal
		secrets func(args map[string]any) []string
	}{"agent allowed all but notes", noNotes, func(args map[string]any) []string {
		sent, _ := json.Marshal(args)
		var out []string
		for _, v := range a.values {
			if strings.HasPrefix(v, "Filed-") && !strings.Contains(string(sent), v) {
				out = append(out, v)
			}
		}
		return out
	}})
	for _, tool := range e.server.Tools() {
		mc := consentMatrix[tool.Name()]
		t.Run(tool.Name(), func(t *testing.T) {
			for _, at := range attackers {
				args := mc.args(a)
				out, merr := e.callAs(t, at.p, tool.Name(), args)
				var text string
				if merr != nil {
					if !slices.Contains(refusals, merr.Body.Code) && !slices.Contains(mc.alsoRefuses, merr.Body.Code) {
						t.Errorf("%s: code %s (%s); want a denial or not found", at.name, merr.Body.Code, merr.Body.Message)
					}
					b, _ := json.Marshal(merr.Body)
					text = string(b)
				} else {
					b, _ := json.Marshal(out)
					text = string(b)
				}
				for _, s := range at.secrets(args) {
					if strings.Contains(text, s) {
						t.Errorf("%s: the answer holds %q: %s", at.name, s, truncate(text))
					}
				}
			}
			// Positive control: a fully allowed agent on its own data.
			u, err := e.control.CreateUser(ctx, "ctl_"+tool.Name())
			if err != nil {
				t.Fatal(err)
			}
			p, _ := e.agent(t, u.ID, "full", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"}, [3]string{"delete", "*", "allow"})
			own := seedUser(t, e, p, "ctl-"+tool.Name())
			if mc.ownerOnly {
				p = e.owner
			}
			if _, merr := e.callAs(t, p, tool.Name(), mc.args(own)); merr != nil && !(mc.ownerOnly && merr.Body.Code == mcp.CodeNotFound) && !slices.Contains(mc.found, merr.Body.Code) {
				t.Errorf("positive control: %s as an allowed agent on its own data failed: %v", tool.Name(), merr)
			}
		})
	}
	if after := ownerView(t, e, a); after != before {
		t.Errorf("A's data changed under the attacks:\nbefore %s\nafter  %s", before, after)
	}
}

// ownerView is what A's owner sees of A's data, without the per-call meta.
func ownerView(t *testing.T, e *env, f fixture) string {
	t.Helper()
	var b strings.Builder
	for _, id := range []string{f.company, f.company2, f.person, f.invoice, f.recipe} {
		out := e.mustCall(t, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
		delete(out, "meta")
		j, _ := json.Marshal(out)
		b.Write(j)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_relationships", map[string]any{"entity_id": f.person}},
		{"review_memories", map[string]any{"action": "list"}},
		{"get_user_context", map[string]any{}},
		{"list_entity_types", map[string]any{"keyword": "recipe"}},
		{"get_schema_recommendations", map[string]any{"entity_type": "recipe", "status": "all"}},
		// Every memory, as update_memory and delete_memory are attacks too.
		{"search_memory", map[string]any{"collection": "notes", "query": "", "limit": 100}},
	} {
		out := e.mustCall(t, c.tool, c.args)
		delete(out, "meta")
		j, _ := json.Marshal(out)
		b.Write(j)
	}
	return b.String()
}

func truncate(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
