package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
	"github.com/cairnkg/cairn/mcp"
)

// Consent follows what a file says (issue 34, D2): the text of a file found
// to be an invoice, and everything derived from it (its note, its memory,
// an insight or a memory drawn from it, its job's details, the file
// itself), is readable only by an agent that may read invoices. The review
// read an invoice's text through retrieve_entities of notes, search_memory
// of the files collection, get_user_context with a topic and list_jobs,
// as an agent with the README's rules: every entity but invoices.
func TestDerivedDataFollowsConsent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b storeBackend) {
		e := newEnvWith(t, envOptions{backend: &b, contextStores: true})
		u := e.owner.UserID
		everything := [][3]string{
			{"read", "entities/*", "allow"}, {"read", "memories/*", "allow"}, {"read", "sources", "allow"},
			{"read", "profile", "allow"}, {"read", "graph", "allow"},
		}
		snoop, _ := e.agent(t, u, "snoop", append(everything, [3]string{"read", "entities/invoice", "deny"})...)
		accountant, _ := e.agent(t, u, "accountant", everything...)

		upload := func(name, mime, text string) (file, job string) {
			out, merr := e.callAs(t, e.owner, "store", map[string]any{
				"file_content": base64.StdEncoding.EncodeToString([]byte(text)), "mime_type": mime, "original_filename": name})
			if merr != nil {
				t.Fatal(merr)
			}
			job = out["job_id"].(string)
			if j := waitJobDone(t, e, e.owner, job); j["status"] != "succeeded" {
				t.Fatalf("%s: job = %v", name, j)
			}
			return out["source_id"].(string), job
		}
		textFile, _ := upload("inv.txt", "text/plain", "Invoice number: INV-900\nVendor: Initech Confidential\nTotal: 777.00 EUR\n")
		csvFile, csvJob := upload("invoices.csv", "text/csv",
			"invoice_number,vendor_name,amount,currency,issue_date\nINV-901,Globex Corporation,120.00,EUR,2026-03-01\nINV-902,Globex Corporation,80.00,EUR,2026-03-02\n")
		// A plain note's file stays readable by both: the rule follows
		// what a file holds, no more.
		noteFile, _ := upload("plans.md", "text/markdown", "# Rocket plans\nFuel, fins and a launch window.\n")
		if _, merr := e.callAs(t, e.owner, "store_insight", map[string]any{"fileId": csvFile, "insight": map[string]any{
			"title": "Globex pricing", "content": "Globex Corporation bills in EUR", "sourceLLM": "test"}}); merr != nil {
			t.Fatal(merr)
		}
		if _, merr := e.callAs(t, e.owner, "save_memory", map[string]any{"collection": "notes",
			"text": "Initech Confidential is the vendor to watch", "source_id": textFile}); merr != nil {
			t.Fatal(merr)
		}

		// leaks returns the secrets an answer holds.
		leaks := func(out map[string]any) []string {
			raw, _ := json.Marshal(out)
			var found []string
			for _, s := range []string{"Initech Confidential", "Globex Corporation", "INV-90", "777.00", ":777", `"invoice"`, "invoice_number"} {
				if strings.Contains(string(raw), s) {
					found = append(found, s)
				}
			}
			return found
		}
		reads := []struct {
			tool string
			args map[string]any
		}{
			{"retrieve_entities", map[string]any{"entity_type": "note", "query": "Initech"}},
			{"retrieve_entities", map[string]any{"entity_type": "note", "limit": 50}},
			{"retrieve_entities", map[string]any{"query": "Initech"}},
			{"search_memory", map[string]any{"collection": "files", "query": "Globex"}},
			{"search_memory", map[string]any{"collection": "files", "query": "Initech"}},
			{"search_memory", map[string]any{"collection": "files", "query": "vendor", "keywords": "Initech"}},
			{"search_memory", map[string]any{"collection": "notes", "query": "Initech vendor"}},
			{"query_insights", map[string]any{"filters": map[string]any{"keywords": "Globex"}}},
			{"get_user_context", map[string]any{"topic": "Initech"}},
			{"get_user_context", map[string]any{"topic": "vendor total EUR"}},
			{"get_user_context", map[string]any{}},
			{"list_jobs", map[string]any{}},
			{"get_job", map[string]any{"job_id": csvJob}},
		}
		for _, r := range reads {
			out, merr := e.callAs(t, snoop, r.tool, r.args)
			if merr != nil {
				t.Fatalf("snoop %s %v: %v", r.tool, r.args, merr)
			}
			if l := leaks(out); len(l) > 0 {
				t.Errorf("snoop %s %v shows %v: %v", r.tool, r.args, l, out)
			}
		}
		// The files collection counts for snoop only the plain note's text.
		filesCount := func(p consent.Principal) any {
			ctx, merr := e.callAs(t, p, "get_user_context", map[string]any{})
			if merr != nil {
				t.Fatal(merr)
			}
			for _, c := range ctx["memories"].(map[string]any)["collections"].([]any) {
				if c.(map[string]any)["name"] == "files" {
					return c.(map[string]any)["count"]
				}
			}
			return nil
		}
		if got, all := filesCount(snoop), filesCount(accountant); got != 1.0 || all != 3.0 {
			t.Errorf("the files collection counts %v memories for snoop and %v for the accountant, want 1 and 3", got, all)
		}
		job, _ := e.callAs(t, snoop, "get_job", map[string]any{"job_id": csvJob})
		if job["status"] != "succeeded" || !strings.Contains(job["result"].(map[string]any)["withheld"].(string), "withheld") {
			t.Errorf("snoop's view of the invoice job = %v, want its status and no details", job)
		}
		for _, f := range []string{textFile, csvFile} {
			if _, merr := e.callAs(t, snoop, "get_file_url", map[string]any{"file_path": f}); merr == nil || merr.Body.Code != mcp.CodeFileNotFound {
				t.Errorf("snoop's URL of an invoice file: %v, want %s", merr, mcp.CodeFileNotFound)
			}
		}

		// The accountant, who may read invoices, reads all of it; both
		// read the plain note.
		mustFind := func(p consent.Principal, tool string, args map[string]any, want string) {
			t.Helper()
			out, merr := e.callAs(t, p, tool, args)
			if merr != nil {
				t.Fatal(merr)
			}
			if raw, _ := json.Marshal(out); !strings.Contains(string(raw), want) {
				t.Errorf("%s %v misses %q: %s", tool, args, want, raw)
			}
		}
		mustFind(accountant, "search_memory", map[string]any{"collection": "files", "query": "Globex"}, "Globex Corporation")
		mustFind(accountant, "search_memory", map[string]any{"collection": "files", "query": "vendor", "keywords": "Initech"}, "Initech Confidential")
		mustFind(accountant, "search_memory", map[string]any{"collection": "notes", "query": "Initech vendor"}, "vendor to watch")
		mustFind(accountant, "query_insights", map[string]any{"filters": map[string]any{"keywords": "Globex"}}, "Globex pricing")
		mustFind(accountant, "get_job", map[string]any{"job_id": csvJob}, "invoice")
		mustFind(accountant, "get_file_url", map[string]any{"file_path": csvFile}, "signed_url")
		for _, p := range []consent.Principal{snoop, accountant} {
			mustFind(p, "retrieve_entities", map[string]any{"entity_type": "note", "limit": 50}, "Rocket plans")
			mustFind(p, "search_memory", map[string]any{"collection": "files", "query": "launch", "keywords": "launch window"}, "launch window")
			mustFind(p, "get_file_url", map[string]any{"file_path": noteFile}, "signed_url")
		}
	})
}

// An e-mail's attachments count against the upload limit of the key that
// stored the e-mail (issue 34, D5): with one upload a minute, the e-mail is
// that upload and its attachment is refused, which the job reports.
func TestAttachmentsCountAgainstTheUploadLimit(t *testing.T) {
	e := newEnvWith(t, envOptions{limits: map[consent.RateClass]int{consent.RateClassUpload: 1}})
	p, _ := e.agent(t, e.owner.UserID, "mailer", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"})
	out, merr := e.callAs(t, p, "store", map[string]any{
		"file_content": base64.StdEncoding.EncodeToString([]byte(interprettest.SampleEmail)), "mime_type": "message/rfc822"})
	if merr != nil {
		t.Fatal(merr)
	}
	job := waitJobDone(t, e, p, out["job_id"].(string))
	result, _ := job["result"].(map[string]any)
	refused, _ := result["attachments_refused"].(map[string]any)
	if job["status"] != "succeeded" || fmt.Sprint(refused["filenames"]) != "[costs.csv]" || result["attachment_file_ids"] != nil {
		t.Fatalf("job = %v, want succeeded with costs.csv refused", job)
	}
}

// What a source says of the file it came from (its name, its hash, the job
// that read it) follows the file's consent too: a contact read from an
// e-mail, which was found to hold contacts and a note, shows an agent that
// may read contacts and not notes its values, but not the e-mail's name,
// in its provenance and its neighbourhood, and the e-mail's source is not
// there for it.
func TestProvenanceDoesNotNameAnUnreadableFile(t *testing.T) {
	e := newEnv(t)
	out, merr := e.callAs(t, e.owner, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString([]byte(interprettest.SampleEmail)),
		"mime_type": "message/rfc822", "original_filename": "secret-plans.eml"})
	if merr != nil {
		t.Fatal(merr)
	}
	email := out["source_id"].(string)
	waitJobDone(t, e, e.owner, out["job_id"].(string))
	ada := e.mustCall(t, "retrieve_entity_by_identifier", map[string]any{"identifier": "ada@example.com"})["entities"].([]any)[0].(map[string]any)["id"]
	noNotes, _ := e.agent(t, e.owner.UserID, "no-notes", [3]string{"read", "*", "allow"}, [3]string{"read", "entities/note", "deny"})

	prov := func(p consent.Principal) string {
		out, merr := e.callAs(t, p, "retrieve_field_provenance", map[string]any{"entity_id": ada, "field": "email"})
		if merr != nil {
			t.Fatal(merr)
		}
		raw, _ := json.Marshal(out)
		return string(raw)
	}
	if got := prov(e.owner); !strings.Contains(got, "secret-plans.eml") {
		t.Fatalf("the owner's provenance misses the file: %s", got)
	}
	if got := prov(noNotes); strings.Contains(got, "secret-plans.eml") || !strings.Contains(got, "ada@example.com") {
		t.Errorf("an agent denied notes: %s, want the value without the e-mail's name", got)
	}
	hood, merr := e.callAs(t, noNotes, "retrieve_graph_neighborhood", map[string]any{"node_id": ada})
	if raw, _ := json.Marshal(hood); merr != nil || strings.Contains(string(raw), "secret-plans.eml") {
		t.Errorf("the contact's neighbourhood: %s, %v; want no e-mail name", raw, merr)
	}
	if _, merr := e.callAs(t, noNotes, "retrieve_graph_neighborhood", map[string]any{"node_id": email, "node_type": "source"}); merr == nil || merr.Body.Code != mcp.CodeSourceNotFound {
		t.Errorf("the e-mail's source node: %v, want %s", merr, mcp.CodeSourceNotFound)
	}
}
