package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

// waitJob polls get_job until the job has finished.
func waitJob(t *testing.T, cs *mcpsdk.ClientSession, id string) map[string]any {
	t.Helper()
	// The interval grows to a second, as a client that shares its key's
	// rate limit (120 calls a minute) with other work should poll: a slow
	// job on a loaded machine must not spend the whole minute's calls.
	wait := 50 * time.Millisecond
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(wait) {
		wait = min(2*wait, time.Second)
		j := callTool(t, cs, "get_job", map[string]any{"job_id": id})
		if s := j["status"]; s != "queued" && s != "running" {
			return j
		}
	}
	t.Fatalf("job %s did not finish", id)
	return nil
}

// TestEndToEndFiles is the files scenario through a real MCP client and
// the built binary: a PDF invoice, a CSV of 1,000 transactions, an e-mail
// with an attachment and a calendar are stored; their jobs succeed; the
// entities, their timeline events and the provenance that names the file
// are there; the signed URL gives the same bytes back; the same upload
// again is deduplicated.
func TestEndToEndFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		// PostgreSQL has no default bucket; a folder outside the data
		// directory stands in for a shared one.
		env = append(env, "CAIRN_BLOB_URL=file://"+filepath.Join(t.TempDir(), "bucket")+"?create_dir=true&no_tmp_dir=true",
			"CAIRN_RATE_LIMIT_UPLOAD=0")
		cs := connectHTTP(t, startServe(t, dataDir, env...))
		invoice := interprettest.MakePDF("Analytical Engines Ltd", "INVOICE", "Invoice No: INV-7", "Date: 2026-03-05",
			"Due date: 2026-04-04", "Bill to: Ada Lovelace", "Total: EUR 980.00")
		var csv strings.Builder
		csv.WriteString("Date,Description,Amount,Currency,Transaction ID\n")
		for i := range 1000 {
			fmt.Fprintf(&csv, "2026-01-%02d,Purchase %d,-%d.25,EUR,T%04d\n", i%28+1, i, i%90+1, i)
		}
		files := []struct {
			name, mime string
			data       []byte
		}{
			{"invoice.pdf", "application/pdf", invoice},
			{"transactions.csv", "text/csv", []byte(csv.String())},
			{"notes.eml", "message/rfc822", []byte(interprettest.SampleEmail)},
			{"calendar.ics", "text/calendar", []byte(interprettest.SampleICS)},
		}
		sources, jobResults := map[string]string{}, map[string]map[string]any{}
		for _, f := range files {
			out := callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString(f.data), "mime_type": f.mime, "original_filename": f.name})
			if out["mime_type"] != f.mime || out["job_id"] == nil {
				t.Fatalf("store %s = %v", f.name, out)
			}
			sources[f.name] = out["source_id"].(string)
			j := waitJob(t, cs, out["job_id"].(string))
			if j["status"] != "succeeded" {
				t.Fatalf("%s: job = %v", f.name, j)
			}
			jobResults[f.name], _ = j["result"].(map[string]any)
		}
		// The e-mail's attachment is a file of its own, interpreted too.
		jobs := callTool(t, cs, "list_jobs", map[string]any{})["jobs"].([]any)
		if len(jobs) != 5 {
			t.Fatalf("%d jobs, want 4 files and the attachment", len(jobs))
		}
		for _, j := range jobs {
			waitJob(t, cs, j.(map[string]any)["job_id"].(string))
		}

		invoices := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "invoice"})["entities"].([]any)
		if len(invoices) != 1 {
			t.Fatalf("invoices = %v", invoices)
		}
		inv := invoices[0].(map[string]any)
		if snap := inv["snapshot"].(map[string]any); snap["invoice_number"] != "INV-7" || snap["amount"] != 980.0 {
			t.Fatalf("invoice = %v", inv)
		}
		prov := callTool(t, cs, "retrieve_field_provenance", map[string]any{"entity_id": inv["id"], "field": "amount"})
		file, _ := prov["file"].(map[string]any)
		if file["filename"] != "invoice.pdf" || file["file_id"] != sources["invoice.pdf"] {
			t.Fatalf("provenance = %v, want the file", prov)
		}
		events := callTool(t, cs, "list_timeline_events", map[string]any{"entity_id": inv["id"]})["events"].([]any)
		if len(events) != 2 {
			t.Fatalf("invoice events = %v", events)
		}
		if total := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "transaction", "limit": 1})["total"]; total != 1001.0 {
			// 1,000 rows, and the attachment's one.
			t.Fatalf("%v transactions, want 1001", total)
		}
		contacts := callTool(t, cs, "retrieve_entity_by_identifier", map[string]any{"identifier": "ada@example.com"})
		if b := fmt.Sprint(contacts); !strings.Contains(b, "Ada Lovelace") {
			t.Fatalf("ada = %v", contacts)
		}
		notes := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "note", "limit": 50})
		if b := fmt.Sprint(notes); !strings.Contains(b, "Engine notes") {
			t.Fatalf("notes = %v", notes)
		}
		// The calendar's events are event entities, under the schema the
		// calendar created for the user; their start and end are on the
		// timeline.
		if created := fmt.Sprint(jobResults["calendar.ics"]["schema_created"]); !strings.Contains(created, "entity_type:event") {
			t.Fatalf("calendar schema_created = %s", created)
		}
		calEvents := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "event", "limit": 50})["entities"].([]any)
		if len(calEvents) != 2 {
			t.Fatalf("events = %v", calEvents)
		}
		for _, ev := range calEvents {
			ev := ev.(map[string]any)
			tl := callTool(t, cs, "list_timeline_events", map[string]any{"entity_id": ev["id"]})["events"].([]any)
			if b := fmt.Sprint(tl); !strings.Contains(b, "EventStart") {
				t.Fatalf("timeline of %v = %v", ev["snapshot"], tl)
			}
		}
		// A table of no known kind is of a type named after its file.
		out := callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString([]byte("Name,Cuisine\nPancakes,French\nDal,Indian\n")),
			"mime_type": "text/csv", "original_filename": "recipes.csv"})
		j := waitJob(t, cs, out["job_id"].(string))
		res, _ := j["result"].(map[string]any)
		if j["status"] != "succeeded" || res["entity_type"] != "recipes" || !strings.Contains(fmt.Sprint(res["schema_created"]), "entity_type:recipes") {
			t.Fatalf("recipes.csv job = %v", j)
		}
		if total := callTool(t, cs, "retrieve_entities", map[string]any{"entity_type": "recipes"})["total"]; total != 2.0 {
			t.Fatalf("%v recipes, want 2", total)
		}

		u := callTool(t, cs, "retrieve_file_url", map[string]any{"file_path": sources["invoice.pdf"]})
		resp, err := http.Get(u["signed_url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, invoice) {
			t.Fatalf("signed URL: %d, %d bytes, want the %d bytes stored", resp.StatusCode, len(got), len(invoice))
		}
		again := callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString(invoice), "mime_type": "application/pdf"})
		if again["deduplicated"] != true || again["source_id"] != sources["invoice.pdf"] || again["job_id"] != nil {
			t.Fatalf("the same upload again = %v", again)
		}
	})
}
