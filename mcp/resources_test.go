package mcp_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/mcp"
)

// readResource reads uri and decodes its JSON, or returns the error.
func readResource(t *testing.T, cs *mcpsdk.ClientSession, uri string) (map[string]any, error) {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return m, nil
}

// TestResourcesFollowConsent lists and reads the resources as the owner and
// as an agent that may read companies but not invoices: the agent is not
// listed the invoices' collection nor their year, and reads an invoice, its
// observations and its collection as not found, as it reads an id that
// does not exist; neotoma:// reads as cairn://.
func TestResourcesFollowConsent(t *testing.T) {
	e := newEnv(t)
	stored := e.mustCall(t, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "company", "name": "Acme Rockets", "domain": "acme.example"},
		map[string]any{"entity_type": "invoice", "invoice_number": "INV-991", "vendor_name": "Zephyr Clinic", "issue_date": "2025-01-15", "amount": 777.25},
	}})
	ents := stored["entities"].([]any)
	company, invoice := ents[0].(map[string]any)["entity_id"].(string), ents[1].(map[string]any)["entity_id"].(string)
	agent, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/company", "allow"}, [3]string{"read", "profile", "allow"})
	owner, narrow := e.connect(t), e.connectAs(t, agent)

	uris := func(cs *mcpsdk.ClientSession) []string {
		res, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	if got := uris(owner); !slices.Contains(got, "cairn://entities/company") || !slices.Contains(got, "cairn://entities/invoice") || !slices.Contains(got, "cairn://timeline/2025") {
		t.Errorf("the owner's resources %v, want both collections and 2025", got)
	}
	if got := uris(narrow); !slices.Contains(got, "cairn://entities/company") || slices.Contains(got, "cairn://entities/invoice") || slices.Contains(got, "cairn://timeline/2025") {
		t.Errorf("the agent's resources %v, want the companies only", got)
	}
	tmpls, err := narrow.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tmpls.ResourceTemplates) != 8 {
		t.Fatalf("templates %+v, %v; want 8", tmpls, err)
	}

	for _, uri := range []string{"cairn://entities/company", "cairn://entity/" + company, "neotoma://entity/" + company} {
		got, err := readResource(t, narrow, uri)
		if err != nil || !strings.Contains(mustJSON(t, got), "acme.example") {
			t.Errorf("the agent reads %s: %v, %v", uri, got, err)
		}
	}
	if got, err := readResource(t, owner, "cairn://entity/"+invoice+"/observations"); err != nil || got["type"] != "entity_observations" || !strings.Contains(mustJSON(t, got), "INV-991") {
		t.Errorf("the owner reads the invoice's observations: %v, %v", got, err)
	}
	if got, err := readResource(t, owner, "cairn://timeline/2025-01"); err != nil || got["total"] != float64(1) {
		t.Errorf("the owner reads January 2025: %v, %v", got, err)
	}
	if _, err := readResource(t, owner, "cairn://entity/"+company+"/relationships"); err != nil {
		t.Errorf("the owner reads the company's relationships: %v", err)
	}
	// A denied read is the same not-found as a missing one.
	notFound := func(uri string, err error) string {
		if err == nil {
			return "no error"
		}
		return strings.ReplaceAll(err.Error(), uri, "URI")
	}
	missingURI := "cairn://entity/ent_00000000000000000000000000"
	_, err = readResource(t, narrow, missingURI)
	want := notFound(missingURI, err)
	if !strings.Contains(strings.ToLower(want), "not found") {
		t.Fatalf("a missing entity reads as %q", want)
	}
	for _, uri := range []string{"cairn://entities/invoice", "cairn://entity/" + invoice, "cairn://entity/" + invoice + "/observations", "neotoma://entity/" + invoice} {
		got, err := readResource(t, narrow, uri)
		if notFound(uri, err) != want && notFound(strings.Replace(uri, "neotoma://", "cairn://", 1), err) != want {
			t.Errorf("the agent denied invoices reads %s: %v, %v; want the not-found of a missing entity, %q", uri, got, err, want)
		}
	}
	if got, err := readResource(t, narrow, "cairn://timeline/2025"); err != nil || got["total"] != float64(0) {
		t.Errorf("the agent denied invoices reads 2025: %v, %v", got, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResourcesPage reads a collection of 250 entities a page at a time by
// following next_uri (a page is cut by retrieve_entities' response budget
// well before 100 entities), and gets each entity once; a page's query is
// checked; resources/list pages with its cursor.
func TestResourcesPage(t *testing.T) {
	e := newEnv(t)
	var ents []any
	for i := range 250 {
		ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprintf("Company %03d", i)})
	}
	for i := 0; i < len(ents); i += 100 {
		e.mustCall(t, "store", map[string]any{"entities": ents[i:min(i+100, len(ents))]})
	}
	cs := e.connect(t)
	seen := map[string]bool{}
	pages := 0
	for uri := "cairn://entities/company"; uri != ""; pages++ {
		got, err := readResource(t, cs, uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if got["total"] != float64(250) {
			t.Fatalf("%s: total %v", uri, got["total"])
		}
		for _, ent := range got["entities"].([]any) {
			id := ent.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("%s: entity %s again", uri, id)
			}
			seen[id] = true
		}
		next, _ := got["next_uri"].(string)
		if next != "" && !strings.HasPrefix(next, "cairn://entities/company?offset=") {
			t.Fatalf("next_uri %q", next)
		}
		uri = next
		if pages > 100 {
			t.Fatal("next_uri does not end")
		}
	}
	if len(seen) != 250 || pages < 3 {
		t.Errorf("%d entities in %d pages, want 250 in 3 or more", len(seen), pages)
	}
	for _, uri := range []string{"cairn://entities/company?offset=-1", "cairn://entities/company?offset=x", "cairn://entities/company?page=2"} {
		if _, err := readResource(t, cs, uri); err == nil || !strings.Contains(err.Error(), "offset") {
			t.Errorf("read %s: %v, want an invalid-params error about offset", uri, err)
		}
	}
	if _, err := readResource(t, cs, "cairn://entity/"+slices.Collect(maps.Keys(seen))[0]+"?offset=1"); err == nil {
		t.Error("an entity read with a page's query succeeded")
	}
	if got, err := readResource(t, cs, "cairn://entities/company?offset=5000"); err != nil || len(got["entities"].([]any)) != 0 || got["next_uri"] != nil {
		t.Errorf("a page past the end: %v, %v", got, err)
	}
	tmpls, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range tmpls.ResourceTemplates {
		if strings.HasPrefix(tm.URITemplate, "cairn://entities/") && tm.URITemplate != "cairn://entities/{entity_type}{?offset}" {
			t.Errorf("collection template %q", tm.URITemplate)
		}
	}
	if _, err := cs.ListResources(t.Context(), &mcpsdk.ListResourcesParams{Cursor: "nonsense"}); err == nil {
		t.Error("resources/list with a cursor it never gave succeeded")
	}
}

// TestResourcesListPages lists the resources of a user with 120 entity
// types through resources/list's cursor: every collection once.
func TestResourcesListPages(t *testing.T) {
	e := newEnv(t)
	var ents []any
	for i := range 120 {
		ents = append(ents, map[string]any{"entity_type": fmt.Sprintf("kind_%03d", i), "name": "one"})
	}
	e.mustCall(t, "store", map[string]any{"entities": ents[:100]})
	e.mustCall(t, "store", map[string]any{"entities": ents[100:]})
	cs := e.connect(t)
	seen := map[string]bool{}
	pages := 0
	for cursor := ""; ; pages++ {
		res, err := cs.ListResources(t.Context(), &mcpsdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			if seen[r.URI] {
				t.Fatalf("%s listed twice", r.URI)
			}
			seen[r.URI] = true
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	n := 0
	for uri := range seen {
		if strings.HasPrefix(uri, "cairn://entities/kind_") {
			n++
		}
	}
	if n != 120 || pages != 1 {
		t.Errorf("%d collections in %d pages, want 120 in 2", n, pages+1)
	}
}

// TestTimelinePeriodsBeyondTheNewestEvents stores an invoice of 1990 and
// 120 tasks due in 2025 (more events than a page): the owner is listed,
// and completes, the year 1990 as well as 2025, and 1990's month once the
// year is typed; list_timeline_events with years gives both years,
// whatever its page; an agent denied invoices gets neither 1990 nor its
// month from any of them.
func TestTimelinePeriodsBeyondTheNewestEvents(t *testing.T) {
	e := newEnv(t)
	ents := []any{map[string]any{"entity_type": "invoice", "invoice_number": "INV-1990", "vendor_name": "Old Mill", "issue_date": "1990-05-05", "amount": 12.5}}
	for i := range 120 {
		ents = append(ents, map[string]any{"entity_type": "task", "title": fmt.Sprintf("Task %03d", i), "due_date": fmt.Sprintf("2025-%02d-%02d", i%12+1, i%28+1)})
	}
	e.mustCall(t, "store", map[string]any{"entities": ents})
	agent, _ := e.agent(t, e.owner.UserID, "narrow", [3]string{"read", "entities/task", "allow"}, [3]string{"read", "profile", "allow"})
	owner, narrow := e.connect(t), e.connectAs(t, agent)

	type periods struct{ listed, from19, from1990, from2025, tool []string }
	read := func(cs *mcpsdk.ClientSession) periods {
		t.Helper()
		var p periods
		res, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			if y, ok := strings.CutPrefix(r.URI, "cairn://timeline/"); ok {
				p.listed = append(p.listed, y)
			}
		}
		orNil := func(v []string) []string {
			if len(v) == 0 {
				return nil
			}
			return v
		}
		p.from19 = orNil(complete(t, cs, mcp.PromptSummarisePeriod, "period", "19"))
		p.from1990 = orNil(complete(t, cs, mcp.PromptSummarisePeriod, "period", "1990"))
		p.from2025 = orNil(complete(t, cs, mcp.PromptSummarisePeriod, "period", "2025-1"))
		out, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "list_timeline_events", Arguments: map[string]any{"limit": 1, "years": true}})
		if err != nil || out.IsError {
			t.Fatalf("list_timeline_events: %+v, %v", out, err)
		}
		got := out.StructuredContent.(map[string]any)
		if events, _ := got["events"].([]any); len(events) != 1 || got["months"] != nil {
			t.Errorf("list_timeline_events with years, limit 1: %d events and months %v, want the page of 1 and no months", len(events), got["months"])
		}
		years, _ := got["years"].([]any)
		for _, y := range years {
			p.tool = append(p.tool, y.(string))
		}
		return p
	}
	want := periods{
		listed: []string{"2025", "1990"}, from19: []string{"1990"}, from1990: []string{"1990", "1990-05"},
		from2025: []string{"2025-12", "2025-11", "2025-10"}, tool: []string{"2025", "1990"},
	}
	if got := read(owner); !reflect.DeepEqual(got, want) {
		t.Errorf("the owner's periods %+v, want %+v", got, want)
	}
	want = periods{listed: []string{"2025"}, from2025: []string{"2025-12", "2025-11", "2025-10"}, tool: []string{"2025"}}
	if got := read(narrow); !reflect.DeepEqual(got, want) {
		t.Errorf("the periods of the agent denied invoices %+v, want %+v", got, want)
	}
}
