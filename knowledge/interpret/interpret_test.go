package interpret_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnkg/cairn/knowledge/interpret"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

func run(t *testing.T, s *interpret.Set, mime, name string, data []byte) interpret.Result {
	t.Helper()
	r, err := s.Interpret(t.Context(), interpret.Document{Data: data, MimeType: mime, Filename: name})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func byType(r interpret.Result, typ string) []map[string]any {
	var out []map[string]any
	for _, rec := range r.Records {
		if rec.Entity["entity_type"] == typ {
			out = append(out, rec.Entity)
		}
	}
	return out
}

func TestEmail(t *testing.T) {
	r := run(t, interpret.NewSet(interpret.Config{}), "message/rfc822", "notes.eml", []byte(interprettest.SampleEmail))
	contacts := byType(r, "contact")
	var got []string
	for _, c := range contacts {
		got = append(got, fmt.Sprint(c["name"], " <", c["email"], ">"))
	}
	want := []string{"Ada Lovelace <ada@example.com>", "Charles Babbage <charles@example.com>", "team@example.com <team@example.com>", "María López <maria@example.com>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("contacts = %v, want %v", got, want)
	}
	notes := byType(r, "note")
	if len(notes) != 1 || notes[0]["title"] != "Engine notes – March (2026-03-02 08:30)" || notes[0]["created_date"] != "2026-03-02T08:30:00Z" ||
		notes[0]["content"] != "The analytical engine weaves algebraic patterns – see the table." {
		t.Fatalf("note = %v", notes)
	}
	if len(r.Attachments) != 1 || r.Attachments[0].Filename != "costs.csv" || string(r.Attachments[0].Data) != "date,description,amount\n2026-03-01,Gears,-120.50\n" {
		t.Fatalf("attachments = %+v", r.Attachments)
	}
	if !strings.Contains(r.Text, "algebraic patterns") || r.Records[len(r.Records)-1].Range.Unit != "line" {
		t.Fatalf("text %q, ranges %+v", r.Text, r.Records)
	}
}

func TestCalendar(t *testing.T) {
	// Events are event entities, with the schema the store creates for
	// them where the user has no event type: start and end on the timeline.
	r := run(t, interpret.NewSet(interpret.Config{}), "text/calendar", "cal.ics", []byte(interprettest.SampleICS))
	if len(r.Records) != 2 {
		t.Fatalf("%d records", len(r.Records))
	}
	ev := r.Records[0].Entity
	if ev["entity_type"] != "event" || ev["title"] != "Design review" || ev["start"] != "2026-03-10T14:00:00Z" || ev["end"] != "2026-03-10T15:00:00Z" ||
		ev["location"] != "Room 4, 2nd floor" || ev["organizer"] != "Ada Lovelace <ada@example.com>" ||
		fmt.Sprint(ev["attendees"]) != "[Charles <charles@example.com>]" || r.Records[0].Range != (interpret.Range{Unit: "line", Start: 4, End: 13}) {
		t.Fatalf("first event = %v at %+v", ev, r.Records[0].Range)
	}
	if r.Records[1].Entity["title"] != "Quarterly planning day" {
		t.Fatalf("folded summary = %v", r.Records[1].Entity["title"])
	}
	if r.EntityType != "event" || r.Schema == nil || r.Schema.EntityType != "event" ||
		r.Schema.Fields["start"].EventType != "EventStart" || r.Schema.Fields["end"].EventType != "EventEnd" {
		t.Fatalf("result type %q, schema %+v", r.EntityType, r.Schema)
	}
}

func TestVCard(t *testing.T) {
	r := run(t, interpret.NewSet(interpret.Config{}), "text/vcard", "people.vcf", []byte(interprettest.SampleVCF))
	if len(r.Records) != 2 {
		t.Fatalf("%d records", len(r.Records))
	}
	ada, charles := r.Records[0].Entity, r.Records[1].Entity
	if ada["name"] != "Ada Lovelace" || ada["email"] != "ada@example.com" || fmt.Sprint(ada["other_emails"]) != "[ada@home.example]" ||
		ada["phone"] != "+44 20 7946 0000" || ada["company"] != "Analytical Engines Ltd" || ada["birth_date"] != "1815-12-10" {
		t.Fatalf("ada = %v", ada)
	}
	if charles["name"] != "Charles Babbage" || r.Records[1].Range.Start != 12 {
		t.Fatalf("charles = %v at %+v", charles, r.Records[1].Range)
	}
}

func TestPDFAndDOCXInvoices(t *testing.T) {
	lines := []string{"Analytical Engines Ltd", "INVOICE", "Invoice No: INV-2026-042", "Date: 2026-03-05", "Due date: 2026-04-04",
		"Bill to: Ada Lovelace", "Gears x 12", "Total: EUR 1,234.50"}
	s := interpret.NewSet(interpret.Config{})
	for _, tc := range []struct {
		name, mime string
		data       []byte
	}{
		{"invoice.pdf", "application/pdf", interprettest.MakePDF(lines...)},
		{"invoice.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", interprettest.MakeDOCX(lines...)},
	} {
		r := run(t, s, tc.mime, tc.name, tc.data)
		for _, l := range lines {
			if !strings.Contains(r.Text, l) {
				t.Errorf("%s: text %q misses %q", tc.name, r.Text, l)
			}
		}
		inv := byType(r, "invoice")
		if len(inv) != 1 {
			t.Fatalf("%s: invoices %v", tc.name, inv)
		}
		want := map[string]any{"entity_type": "invoice", "invoice_number": "INV-2026-042", "vendor_name": "Analytical Engines Ltd",
			"customer_name": "Ada Lovelace", "amount": 1234.5, "currency": "EUR", "issue_date": "2026-03-05", "due_date": "2026-04-04"}
		if fmt.Sprint(inv[0]) != fmt.Sprint(want) {
			t.Errorf("%s: invoice = %v, want %v", tc.name, inv[0], want)
		}
		// The text is the invoice's: no note holds it (a note would show
		// it to agents that may read notes and not invoices).
		if len(byType(r, "note")) != 0 || r.Skipped == "" {
			t.Errorf("%s: notes %v, skipped %q", tc.name, byType(r, "note"), r.Skipped)
		}
	}
	if _, err := s.Interpret(t.Context(), interpret.Document{Data: []byte("%PDF-1.4 broken"), MimeType: "application/pdf"}); !errors.Is(err, interpret.ErrUnreadable) {
		t.Fatalf("a broken PDF: %v", err)
	}
}

func TestTables(t *testing.T) {
	s := interpret.NewSet(interpret.Config{})
	r := run(t, s, "text/csv", "people.csv", []byte("Full Name;E-Mail;Phone;Team\nAda;ada@example.com;1;R&D\nCharles;charles@example.com;2;R&D\n"))
	if r.EntityType != "contact" || r.Mapping["E-Mail"] != "email" || r.Mapping["Team"] != "team" || r.Records[1].Entity["name"] != "Charles" {
		t.Fatalf("csv = %+v", r)
	}
	r = run(t, s, "application/json", "tx.json", []byte(`{"transactions":[{"id":"t1","date":"03/02/2026","amount":"-4.50","payee":"Cafe"}]}`))
	e := r.Records[0].Entity
	if r.EntityType != "transaction" || e["transaction_id"] != "t1" || e["date"] != "2026-03-02" || e["amount"] != -4.5 || e["merchant"] != "Cafe" {
		t.Fatalf("json = %+v", r)
	}
	r = run(t, s, "application/json", "typed.json", []byte(`[{"entity_type":"company","name":"Acme"}]`))
	if r.Records[0].Entity["name"] != "Acme" {
		t.Fatalf("typed json = %+v", r)
	}
}

// fakeLLM is an OpenAI-compatible chat endpoint that answers from a list.
func fakeLLM(t *testing.T, answers ...any) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "bad request", 400)
			return
		}
		var req struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
			Format   map[string]string   `json:"response_format"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil || req.Model != "tiny" || req.Format["type"] != "json_object" || !strings.Contains(req.Messages[1]["content"], "Sail") {
			http.Error(w, "bad request", 400)
			return
		}
		switch a := answers[min(i, len(answers)-1)].(type) {
		case int:
			http.Error(w, "overloaded", a)
		case string:
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": a}}}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestLLMInterpreter(t *testing.T) {
	doc := interpret.Document{Data: []byte("# Trip\nSail with Grace Hopper (grace@navy.example) on 2026-06-01.\n"), MimeType: "text/markdown", Filename: "trip.md"}
	good := `{"entities":[{"entity_type":"person","name":"Grace Hopper","email":"grace@navy.example"},{"entity_type":"task","title":"Sail","due_date":"2026-06-01"}]}`
	set := func(url string) *interpret.Set {
		return interpret.NewSet(interpret.Config{LLM: &interpret.LLMConfig{BaseURL: url + "/v1", Model: "tiny", APIKey: "sk-test", Temperature: 0.2}})
	}
	t.Run("valid", func(t *testing.T) {
		srv, _ := fakeLLM(t, good)
		r, err := set(srv.URL).Interpret(t.Context(), doc)
		if err != nil {
			t.Fatal(err)
		}
		// What the model found replaces the note that held the text.
		if r.Interpreter != "text+llm" || r.Skipped != "" || len(byType(r, "person")) != 1 || byType(r, "task")[0]["due_date"] != "2026-06-01" ||
			len(byType(r, "note")) != 0 || !strings.Contains(r.Text, "Grace Hopper") {
			t.Fatalf("result = %+v", r)
		}
		cfg := r.Config
		if cfg["provider"] != "openai-compatible" || cfg["model_id"] != "tiny" || cfg["temperature"] != 0.2 || cfg["code_version"] != interpret.LLMCodeVersion ||
			!strings.HasPrefix(cfg["prompt_hash"].(string), "sha256:") {
			t.Fatalf("interpretation_config = %v", cfg)
		}
	})
	t.Run("invalid then valid", func(t *testing.T) {
		srv, n := fakeLLM(t, `{"entities":[{"entity_type":"spaceship","name":"x"}]}`, good)
		if _, err := set(srv.URL).Interpret(t.Context(), doc); err != nil || n.Load() != 2 {
			t.Fatalf("err %v after %d calls", err, n.Load())
		}
	})
	for name, answers := range map[string][]any{
		"prose twice":      {"Sure! Here are the entities: Grace.", "Grace Hopper is a person."},
		"wrong type twice": {`{"entities":[{"entity_type":"person","name":42}]}`},
		"unknown field":    {`{"entities":[{"entity_type":"person","name":"G","shoe_size":9}]}`},
		"bad date":         {`{"entities":[{"entity_type":"task","title":"Sail","due_date":"next June"}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := fakeLLM(t, answers...)
			if _, err := set(srv.URL).Interpret(t.Context(), doc); !errors.Is(err, interpret.ErrUnreadable) {
				t.Fatalf("err = %v, want ErrUnreadable", err)
			}
		})
	}
	t.Run("overloaded is transient", func(t *testing.T) {
		srv, _ := fakeLLM(t, 503)
		var te *interpret.TransientError
		if _, err := set(srv.URL).Interpret(t.Context(), doc); !errors.As(err, &te) {
			t.Fatalf("err = %v, want TransientError", err)
		}
	})
	t.Run("no model", func(t *testing.T) {
		r, err := interpret.NewSet(interpret.Config{}).Interpret(t.Context(), doc)
		if err != nil || r.Skipped == "" || len(r.Records) != 1 || r.Records[0].Entity["entity_type"] != "note" || r.Text == "" {
			t.Fatalf("without a model: %+v, %v", r, err)
		}
	})
}

// A table of no known kind is of a type named after its file, its cells
// kept as they are under their columns' names.
func TestUnknownTableNamedAfterFile(t *testing.T) {
	s := interpret.NewSet(interpret.Config{})
	for _, tc := range []struct{ file, want string }{
		{"Garden Log.csv", "garden_log"}, {"dir/plants-2026.csv", "plants_2026"}, {"2026.csv", "table_2026"},
		{"entity.csv", "table_entity"}, {".csv", "note"},
	} {
		r := run(t, s, "text/csv", tc.file, []byte("Plant,Value,Watered\nFern,high,2026-03-01\n"))
		if r.EntityType != tc.want || len(r.Records) != 1 || r.Records[0].Entity["entity_type"] != tc.want {
			t.Errorf("%s: type %q, records %v; want %s", tc.file, r.EntityType, r.Records, tc.want)
		}
		if tc.want == "note" {
			continue
		}
		if e := r.Records[0].Entity; e["plant"] != "Fern" || e["value"] != "high" || e["watered"] != "2026-03-01" || r.Mapping["Value"] != "value" {
			t.Errorf("%s: entity %v, mapping %v", tc.file, e, r.Mapping)
		}
	}
}
