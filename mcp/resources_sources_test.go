package mcp_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/mcp"
)

// TestSourcesResourceFollowsConsent lists and reads the sources and a
// file's bytes as the owner and as an agent that may read sources and
// companies but not invoices: a store call that produced only an invoice,
// and a file found to be an invoice, are neither listed nor counted for
// the agent, and read (the source, the file's bytes) as an unknown id
// does; the owner gets the bytes back with their MIME type.
func TestSourcesResourceFollowsConsent(t *testing.T) {
	e := newEnv(t)
	company := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme Rockets"}}})["source_id"].(string)
	invoice := e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "invoice", "invoice_number": "INV-991", "amount": 777.25}}})["source_id"].(string)
	invoiceText := []byte("Invoice number: INV-900\nVendor: Initech Confidential\nTotal: 777.00 EUR\n")
	stored := e.mustCall(t, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString(invoiceText), "mime_type": "text/plain", "original_filename": "inv.txt"})
	file := stored["source_id"].(string)
	if j := waitJobDone(t, e, e.owner, stored["job_id"].(string)); j["status"] != "succeeded" {
		t.Fatalf("the invoice file's job: %v", j)
	}
	pngBytes := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 250}, 64)...)
	png := e.mustCall(t, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString(pngBytes), "mime_type": "image/png", "original_filename": "logo.png", "interpret": false})["source_id"].(string)

	agent, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/company", "allow"}, [3]string{"read", "sources", "allow"}, [3]string{"read", "graph", "allow"})
	blind, _ := e.agent(t, e.owner.UserID, "blind", [3]string{"read", "entities/company", "allow"}, [3]string{"read", "profile", "allow"})
	owner, narrow, noSources := e.connect(t), e.connectAs(t, agent), e.connectAs(t, blind)

	listed := func(cs *mcpsdk.ClientSession) (ids []string, total float64) {
		t.Helper()
		got, err := readResource(t, cs, "cairn://sources")
		if err != nil {
			t.Fatalf("read cairn://sources: %v", err)
		}
		for _, s := range got["sources"].([]any) {
			m := s.(map[string]any)
			if m["uri"] != "cairn://source/"+m["id"].(string) {
				t.Errorf("source %v: uri %v", m["id"], m["uri"])
			}
			ids = append(ids, m["id"].(string))
		}
		return ids, got["total"].(float64)
	}
	ids, total := listed(owner)
	for _, id := range []string{company, invoice, file, png} {
		if !slices.Contains(ids, id) {
			t.Errorf("the owner's sources %v lack %s", ids, id)
		}
	}
	if int(total) != len(ids) || ids[0] != png {
		t.Errorf("the owner's sources %v (total %v): want every one, the newest (the png) first", ids, total)
	}
	ids, total = listed(narrow)
	if !slices.Contains(ids, company) || !slices.Contains(ids, png) || slices.Contains(ids, invoice) || slices.Contains(ids, file) || int(total) != len(ids) {
		t.Errorf("the agent denied invoices lists %v (total %v); want the company's source and the png, not the invoice's nor its file", ids, total)
	}
	if got, err := readResource(t, narrow, "neotoma://sources"); err != nil || got["total"] != total {
		t.Errorf("neotoma://sources: %v, %v", got, err)
	}

	// Denied reads look like a missing one.
	notFound := func(uri string, err error) string {
		if err == nil {
			return "no error"
		}
		return strings.ReplaceAll(err.Error(), uri, "URI")
	}
	missing := "cairn://source/src_00000000000000000000000000/file"
	_, err := narrow.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: missing})
	want := notFound(missing, err)
	if !strings.Contains(strings.ToLower(want), "not found") {
		t.Fatalf("a missing file reads as %q", want)
	}
	for _, uri := range []string{"cairn://source/" + invoice, "cairn://source/" + file, "cairn://source/" + file + "/file", "cairn://source/" + company + "/file"} {
		if _, err := narrow.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: uri}); notFound(uri, err) != want {
			t.Errorf("the agent reads %s: %v; want the not-found of a missing file, %q", uri, err, want)
		}
	}
	if _, err := owner.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "cairn://source/" + company + "/file"}); notFound("cairn://source/"+company+"/file", err) != want {
		t.Errorf("the file of a source that is no file: %v", err)
	}

	blob := func(cs *mcpsdk.ClientSession, id string) *mcpsdk.ResourceContents {
		t.Helper()
		res, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "cairn://source/" + id + "/file"})
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("read the file of %s: %+v, %v", id, res, err)
		}
		return res.Contents[0]
	}
	if c := blob(owner, file); !bytes.Equal(c.Blob, invoiceText) || c.MIMEType != "text/plain" || c.Text != "" {
		t.Errorf("the owner's invoice file: %q as %q", c.Blob, c.MIMEType)
	}
	if c := blob(narrow, png); !bytes.Equal(c.Blob, pngBytes) || c.MIMEType != "image/png" {
		t.Errorf("the agent's png: %d bytes as %q", len(c.Blob), c.MIMEType)
	}

	// Without consent on sources: nothing listed, nothing read.
	res, err := noSources.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if r.URI == "cairn://sources" {
			t.Error("cairn://sources is listed to an agent that may not read sources")
		}
	}
	for _, uri := range []string{"cairn://sources", "cairn://source/" + png + "/file"} {
		if _, err := noSources.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("an agent without consent on sources reads %s", uri)
		}
	}
	res, err = owner.ListResources(t.Context(), nil)
	if err != nil || !slices.ContainsFunc(res.Resources, func(r *mcpsdk.Resource) bool { return r.URI == "cairn://sources" }) {
		t.Errorf("the owner's resources %+v, %v: want cairn://sources", res, err)
	}
	tmpls, err := owner.ListResourceTemplates(t.Context(), nil)
	if err != nil || !slices.ContainsFunc(tmpls.ResourceTemplates, func(r *mcpsdk.ResourceTemplate) bool { return r.URITemplate == "cairn://source/{source_id}/file" }) ||
		!slices.ContainsFunc(tmpls.ResourceTemplates, func(r *mcpsdk.ResourceTemplate) bool { return r.URITemplate == "cairn://sources{?offset}" }) {
		t.Errorf("templates %+v, %v", tmpls, err)
	}
}

// TestSourcesResourcePages reads 250 sources a page at a time through
// next_uri, each once.
func TestSourcesResourcePages(t *testing.T) {
	e := newEnv(t)
	for i := range 250 {
		e.mustCall(t, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": fmt.Sprintf("Company %03d", i)}}})
	}
	cs := e.connect(t)
	seen := map[string]bool{}
	pages := 0
	for uri := "cairn://sources"; uri != ""; pages++ {
		got, err := readResource(t, cs, uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if got["total"] != float64(250) {
			t.Fatalf("%s: total %v", uri, got["total"])
		}
		for _, s := range got["sources"].([]any) {
			id := s.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("%s: source %s again", uri, id)
			}
			seen[id] = true
		}
		next, _ := got["next_uri"].(string)
		if next != "" && !strings.HasPrefix(next, "cairn://sources?offset=") {
			t.Fatalf("next_uri %q", next)
		}
		uri = next
		if pages > 100 {
			t.Fatal("next_uri does not end")
		}
	}
	if len(seen) != 250 || pages < 3 {
		t.Errorf("%d sources in %d pages, want 250 in 3 or more", len(seen), pages)
	}
	if got, err := readResource(t, cs, "cairn://sources?offset=5000"); err != nil || len(got["sources"].([]any)) != 0 || got["next_uri"] != nil {
		t.Errorf("a page past the end: %v, %v", got, err)
	}
}

// TestSourceFileResourceSizeLimit reads a file larger than
// mcp.MaxResourceFileBytes: an error that names the limit and get_file_url.
func TestSourceFileResourceSizeLimit(t *testing.T) {
	e := newEnv(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), mcp.MaxResourceFileBytes/16+1)
	st, err := e.files.Put(t.Context(), knowledge.Caller{UserID: e.owner.UserID}, bytes.NewReader(big), files.PutRequest{Filename: "big.bin", MimeType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	cs := e.connect(t)
	_, err = cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "cairn://source/" + st.File.ID + "/file"})
	if err == nil || !strings.Contains(err.Error(), "get_file_url") || !strings.Contains(err.Error(), fmt.Sprint(mcp.MaxResourceFileBytes)) {
		t.Errorf("read a file over the limit: %v; want an error naming the limit and get_file_url", err)
	}
}
