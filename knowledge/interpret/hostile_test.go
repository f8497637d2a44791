package interpret

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

// Hostile files (issue #34): each is generated here at a scale that shows
// the problem, and each test asserts on the outcome (a *TooComplexError
// naming the budget, or a result within bounds), never on time. Linearity
// is asserted on the bytes allocated for an input and one twice its size.

func interpretDoc(t *testing.T, mime string, data []byte) (Result, error) {
	t.Helper()
	return NewSet(Config{}).Interpret(t.Context(), Document{Data: data, MimeType: mime, Filename: "hostile"})
}

// wantTooComplex fails unless err is a *TooComplexError for limit, and
// ErrUnreadable (so that the job is not retried).
func wantTooComplex(t *testing.T, err error, limit string) {
	t.Helper()
	var tc *TooComplexError
	if !errors.As(err, &tc) {
		t.Fatalf("err = %v, want a *TooComplexError for %q", err, limit)
	}
	if tc.Limit != limit {
		t.Fatalf("Limit = %q, want %q (%v)", tc.Limit, limit, err)
	}
	if !errors.Is(err, ErrUnreadable) {
		t.Fatalf("err = %v, want it to be ErrUnreadable too", err)
	}
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantLinear fails when reading an input twice the size allocates more
// than three times as much (a quadratic reader allocates four times).
func wantLinear(t *testing.T, small, large func()) {
	t.Helper()
	a, b := allocated(small), allocated(large)
	if b > 3*a {
		t.Fatalf("allocated %d bytes for n, %d for 2n: not linear", a, b)
	}
	t.Logf("allocated %d bytes for n, %d for 2n", a, b)
}

func TestDeepMIMENesting(t *testing.T) {
	_, err := interpretDoc(t, "message/rfc822", interprettest.NestedEmail(20_000))
	wantTooComplex(t, err, limitMIMEDepth)

	small, large := interprettest.NestedEmail(10_000), interprettest.NestedEmail(20_000)
	wantLinear(t,
		func() { _, _ = interpretEmail(Document{Data: small}) },
		func() { _, _ = interpretEmail(Document{Data: large}) })

	_, err = interpretDoc(t, "message/rfc822", interprettest.NestedEmail(maxMIMEDepth+1))
	wantTooComplex(t, err, limitMIMEDepth)

	r, err := interpretDoc(t, "message/rfc822", interprettest.NestedEmail(maxMIMEDepth))
	if err != nil {
		t.Fatalf("%d levels: %v", maxMIMEDepth, err)
	}
	if !strings.HasSuffix(r.Text, "\n\nhello") {
		t.Fatalf("%d levels: text %q, want the innermost part", maxMIMEDepth, r.Text)
	}
}

// TestDeepDOCXNesting: a DOCX whose document.xml nests elements deeper
// than maxXMLDepth is refused for that budget, at once and whatever the
// collector does; one at the budget is read.
func TestDeepDOCXNesting(t *testing.T) {
	const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	nested := func(n int) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create("word/document.xml")
		// document and body are two levels; n-3 paragraphs, then the run
		// and its text make n.
		_, _ = io.WriteString(w, `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
		_, _ = io.WriteString(w, strings.Repeat("<w:p>", n-4)+"<w:r><w:t>deep</w:t></w:r>"+strings.Repeat("</w:p>", n-4))
		_, _ = io.WriteString(w, `</w:body></w:document>`)
		_ = zw.Close()
		return b.Bytes()
	}
	_, err := interpretDoc(t, docxType, nested(3_000_000))
	wantTooComplex(t, err, limitXMLDepth)
	_, err = interpretDoc(t, docxType, nested(maxXMLDepth+1))
	wantTooComplex(t, err, limitXMLDepth)
	r, err := interpretDoc(t, docxType, nested(maxXMLDepth))
	if err != nil || !strings.Contains(r.Text, "deep") {
		t.Fatalf("%d levels: %q, %v; want the text read", maxXMLDepth, r.Text, err)
	}
}

func TestEmailPartBudgets(t *testing.T) {
	r, err := interpretDoc(t, "message/rfc822", interprettest.FlatEmail(maxAttachments, true))
	if err != nil || len(r.Attachments) != maxAttachments {
		t.Fatalf("%d attachments: %d read, %v", maxAttachments, len(r.Attachments), err)
	}
	_, err = interpretDoc(t, "message/rfc822", interprettest.FlatEmail(maxAttachments+1, true))
	wantTooComplex(t, err, limitAttachments)

	if _, err := interpretDoc(t, "message/rfc822", interprettest.FlatEmail(maxMIMEParts, false)); err != nil {
		t.Fatalf("%d parts: %v", maxMIMEParts, err)
	}
	_, err = interpretDoc(t, "message/rfc822", interprettest.FlatEmail(maxMIMEParts+1, false))
	wantTooComplex(t, err, limitMIMEParts)
}

func TestFoldedVCard(t *testing.T) {
	data := interprettest.FoldedVCard(1 << 20)
	// The interpreter itself, which unfolds the whole value (Parse then
	// cuts it to maxValueBytes: TestLongValuesAreClipped).
	r, err := interpretVCard(Document{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 1 {
		t.Fatalf("%d records, want 1", len(r.Records))
	}
	folds := strings.Count(string(data), "\n 0123456789abcde")
	note, _ := r.Records[0].Entity["note"].(string)
	if want := "start" + strings.Repeat("0123456789abcde", folds); note != want {
		t.Fatalf("note of %d bytes, want %d", len(note), len(want))
	}
	if rg := r.Records[0].Range; rg.Start != 1 || rg.End != int64(strings.Count(string(data), "\n")) {
		t.Fatalf("range %+v", rg)
	}
	small, large := interprettest.FoldedVCard(256<<10), interprettest.FoldedVCard(512<<10)
	wantLinear(t,
		func() { _, _ = interpretVCard(Document{Data: small}) },
		func() { _, _ = interpretVCard(Document{Data: large}) })
}

func TestFoldedICS(t *testing.T) {
	_, err := interpretDoc(t, "text/calendar", interprettest.FoldedICS(2<<20))
	wantTooComplex(t, err, limitLineBytes)

	// The longest description within the budget: 15 bytes a fold.
	folds := (maxContentLineBytes - len("DESCRIPTION:start")) / 15
	data := interprettest.FoldedICS(len(interprettest.FoldedICS(0)) + 17*folds + 17)
	if got := strings.Count(string(data), "\n 0123456789abcde"); got != folds {
		t.Fatalf("%d folds, want %d", got, folds)
	}
	r, err := interpretICS(Document{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if desc, _ := r.Records[0].Entity["description"].(string); desc != "start"+strings.Repeat("0123456789abcde", folds) {
		t.Fatalf("description of %d bytes", len(desc))
	}
	over := strings.Replace(string(data), "END:VEVENT", " 0123456789abcde\nEND:VEVENT", 1)
	_, err = interpretDoc(t, "text/calendar", []byte(over))
	wantTooComplex(t, err, limitLineBytes)
	small, large := interprettest.FoldedICS(256<<10), interprettest.FoldedICS(512<<10)
	wantLinear(t,
		func() { _, _ = interpretICS(Document{Data: small}) },
		func() { _, _ = interpretICS(Document{Data: large}) })
}

func TestContentLineBudgets(t *testing.T) {
	// One unfolded line over the budget.
	long := "BEGIN:VCARD\nFN:x\nNOTE:" + strings.Repeat("y", maxContentLineBytes) + "\nEND:VCARD\n"
	_, err := interpretDoc(t, "text/vcard", []byte(long))
	wantTooComplex(t, err, limitLineBytes)

	// More properties than the budget.
	many := "BEGIN:VCALENDAR\n" + strings.Repeat("X:y\n", maxContentLines)
	_, err = interpretDoc(t, "text/calendar", []byte(many))
	wantTooComplex(t, err, limitContentLines)
}

func TestTableBudgets(t *testing.T) {
	_, err := interpretDoc(t, "text/csv", interprettest.WideCSV(1_000_000))
	wantTooComplex(t, err, limitColumns)

	if _, err := interpretDoc(t, "text/csv", interprettest.WideCSV(maxTableColumns)); err != nil {
		t.Fatalf("%d columns: %v", maxTableColumns, err)
	}
	_, err = interpretDoc(t, "text/csv", interprettest.WideCSV(maxTableColumns+1))
	wantTooComplex(t, err, limitColumns)

	// A wide row under a narrow header, and a quoted delimiter that is not
	// one.
	_, err = interpretDoc(t, "text/csv", []byte("a,b\n"+strings.Repeat("x,", maxTableColumns)+"x\n"))
	wantTooComplex(t, err, limitColumns)
	r, err := interpretDoc(t, "text/csv", []byte("a,b\n\""+strings.Repeat("x,", 2*maxTableColumns)+"\",y\n"))
	if err != nil || len(r.Records) != 1 {
		t.Fatalf("quoted commas: %d records, %v", len(r.Records), err)
	}

	// Cells: maxTableCells/maxTableColumns+1 rows of maxTableColumns.
	_, err = readCSV([]byte(strings.Repeat(strings.Repeat("x,", maxTableColumns-1)+"x\n", maxTableCells/maxTableColumns+1)))
	wantTooComplex(t, err, limitCells)

	_, err = readCSV([]byte("a\n" + strings.Repeat("x\n", maxRecords+1)))
	wantTooComplex(t, err, limitRecords)

	var obj strings.Builder
	obj.WriteString("[{")
	for i := range maxTableColumns + 1 {
		if i > 0 {
			obj.WriteByte(',')
		}
		fmt.Fprintf(&obj, `"k%d":1`, i)
	}
	obj.WriteString("}]")
	_, err = interpretDoc(t, "application/json", []byte(obj.String()))
	wantTooComplex(t, err, limitColumns)
}

// encodedSize is the length of v's JSON encoding with HTML escaping, never
// shorter than the store's (knowledge.canonicalJSON).
func encodedSize(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestNoteFitsFieldLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"newlines", "# Notes\n" + strings.Repeat("\n", 65<<10)},
		{"escapes", "# Escapes\n" + strings.Repeat("\x01<>&\"\\\t\u2028é\x7f", 8<<10)},
		{"invalid utf-8", "# Bytes\n" + strings.Repeat("a\xff", 40<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := interpretDoc(t, "text/markdown", []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			content, _ := r.Records[0].Entity["content"].(string)
			if n := encodedSize(t, content); n > noteContentBytes || n > knowledge.DefaultMaxFieldBytes {
				t.Fatalf("content is %d bytes as JSON, over %d", n, noteContentBytes)
			}
			if n := encodedSize(t, content); n < noteContentBytes-6 {
				t.Fatalf("content is %d bytes as JSON: clipped more than it needs", n)
			}
			if !utf8.ValidString(content) {
				t.Fatal("content is not valid UTF-8: cut inside a rune")
			}
		})
	}
}

// A value over what a stored field may hold (a contact's note of 600 KB,
// an event's description, a CSV cell) is cut to maxValueBytes as JSON:
// the file is read, instead of its job failing on the one value.
func TestLongValuesAreClipped(t *testing.T) {
	long := strings.Repeat("très long <&> ", 50<<10)
	for _, tc := range []struct {
		mime, field string
		data        string
	}{
		{"text/vcard", "note", "BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nNOTE:" + long + "\nEND:VCARD\n"},
		{"text/calendar", "description", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nSUMMARY:Talk\nDTSTART:20260301T100000Z\nDESCRIPTION:" + long + "\nEND:VEVENT\nEND:VCALENDAR\n"},
		{"text/csv", "description", "date,description,amount\n2026-03-01," + long + ",-1.00\n"},
	} {
		t.Run(tc.mime, func(t *testing.T) {
			r, err := interpretDoc(t, tc.mime, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := r.Records[0].Entity[tc.field].(string)
			if n := encodedSize(t, v); n > maxValueBytes || n > knowledge.DefaultMaxFieldBytes || n < maxValueBytes-6 || !utf8.ValidString(v) {
				t.Fatalf("%s is %d bytes as JSON (valid UTF-8: %v), want at most %d and no less than it needs", tc.field, n, utf8.ValidString(v), maxValueBytes)
			}
			if r.Meta["values_clipped"] != 1 {
				t.Fatalf("meta = %v, want values_clipped 1", r.Meta)
			}
		})
	}
}

// A file of much text (a DOCX of 5 MB of words, kilobytes compressed) gives
// a Result of at most MaxResultText of it, its word count of the whole: what
// crosses from the worker to the service is bounded by what is used.
func TestResultTextIsBounded(t *testing.T) {
	words := strings.Repeat("analytical engine ", 300_000) // 5.4 MB, 600,000 words
	r, err := interpretDoc(t, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", interprettest.MakeDOCX(words))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Text) > MaxResultText || len(r.Text) < MaxResultText-4 || r.Meta["word_count"] != 600_000 || r.Meta["text_clipped_at"] != MaxResultText {
		t.Fatalf("text of %d bytes, meta %v; want at most %d, the words of the whole", len(r.Text), r.Meta, MaxResultText)
	}
}

func TestClipEncoded(t *testing.T) {
	inputs := []string{"", "plain", "\x00\x1f\b\f\n\r\t\"\\", "<a href=\"x\">&amp;</a>", "héllo wörld ✓ 🙂", "\u2028\u2029", "a\xffb\xc3", strings.Repeat("\x01é", 50)}
	for _, s := range inputs {
		full := encodedSize(t, s)
		for n := 0; n <= full+2; n++ {
			got := clipEncoded(s, n)
			if !strings.HasPrefix(s, got) {
				t.Fatalf("clipEncoded(%q, %d) = %q, not a prefix", s, n, got)
			}
			size := encodedSize(t, got)
			if n >= 2 && size > n {
				t.Fatalf("clipEncoded(%q, %d) = %q, %d bytes as JSON", s, n, got, size)
			}
			// The next rune would not fit: the clip is as long as it may be.
			if got != s {
				_, w := utf8.DecodeRuneInString(s[len(got):])
				if next := encodedSize(t, s[:len(got)+w]); next <= n {
					t.Fatalf("clipEncoded(%q, %d) = %q, but %q fits (%d bytes)", s, n, got, s[:len(got)+w], next)
				}
			}
		}
	}
}

// checkBounded fails when a result is not within the budgets: no more
// records or attachments than allowed, text within a small multiple of the
// input, and every note's content within its encoded size.
func checkBounded(t *testing.T, data []byte, r Result) {
	t.Helper()
	if len(r.Records) > maxRecords+64 {
		t.Fatalf("%d records", len(r.Records))
	}
	if len(r.Attachments) > maxAttachments {
		t.Fatalf("%d attachments", len(r.Attachments))
	}
	size := 0
	for _, a := range r.Attachments {
		size += len(a.Data)
	}
	if size > len(data) {
		t.Fatalf("attachments of %d bytes from %d", size, len(data))
	}
	if len(r.Text) > 4*len(data)+1024 {
		t.Fatalf("text of %d bytes from %d", len(r.Text), len(data))
	}
	for _, rec := range r.Records {
		if len(rec.Entity) > maxTableColumns+2 {
			t.Fatalf("an entity of %d fields", len(rec.Entity))
		}
		if c, ok := rec.Entity["content"].(string); ok && rec.Entity["entity_type"] == "note" && r.Interpreter == "eml" {
			if n := encodedSize(t, c); n > noteContentBytes {
				t.Fatalf("note content of %d bytes as JSON", n)
			}
		}
	}
}

// fuzzInterpreter runs read on fuzzed input: it must not panic, and gives
// a bounded result or an error.
func fuzzInterpreter(f *testing.F, read func(Document) (Result, error), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := read(Document{Data: data, Filename: "fuzz"})
		if err != nil {
			return
		}
		checkBounded(t, data, r)
	})
}

func FuzzEmail(f *testing.F) {
	fuzzInterpreter(f, interpretEmail,
		interprettest.SampleEmail,
		string(interprettest.NestedEmail(3)),
		string(interprettest.FlatEmail(3, true)),
		"From: a@b.c\nContent-Type: multipart/alternative; boundary=x\n\n--x\nContent-Type: text/html\n\n<p>hi</p>\n--x--\n",
		"Subject: =?utf-8?q?caf=C3=A9?=\nContent-Transfer-Encoding: base64\n\naGVsbG8=\n",
	)
}

func FuzzVCard(f *testing.F) {
	fuzzInterpreter(f, interpretVCard,
		interprettest.SampleVCF,
		"BEGIN:VCARD\nN:Lovelace;Ada\nEMAIL:a@b.c\nEMAIL:d@e.f\nNOTE:long\n  folded\n\tagain\nEND:VCARD\n",
		"BEGIN:VCARD\r\nitem1.TEL;TYPE=\"cell;x\":tel:+1\r\nFN:x\r\nEND:VCARD\r\n",
	)
}

func FuzzICS(f *testing.F) {
	fuzzInterpreter(f, interpretICS,
		interprettest.SampleICS,
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:a\\, b\nDTSTART;TZID=Europe/Paris:20260301T100000\nDTEND;VALUE=DATE:20260302\nATTENDEE;CN=Ada:mailto:a@b.c\nDESCRIPTION:x\n y\nEND:VEVENT\nEND:VCALENDAR\n",
	)
}

func FuzzCSV(f *testing.F) {
	fuzzInterpreter(f, interpretCSV,
		"date,description,amount\n2026-03-01,Gears,-120.50\n",
		"name;email\nAda;a@b.c\n",
		"a\tb\n\"x\"\"y\"\t\"1,2\n3\"\n",
		"invoice_number,total,due\nINV-1,\"1.234,56\",2026-01-02\n",
	)
}

func FuzzJSON(f *testing.F) {
	fuzzInterpreter(f, interpretJSON,
		`[{"name":"Ada","email":"a@b.c"},{"name":"Bo","phone":"+1"}]`,
		`{"items":[{"date":"2026-03-01","amount":-1.5,"description":"x"}]}`,
		`[{"entity_type":"person","name":"x","tags":["a",{"b":null}]}]`,
	)
}

// FuzzText reads free text (the note, and an invoice where one is
// labelled), as Parse does for text/plain.
func FuzzText(f *testing.F) {
	fuzzInterpreter(f, func(d Document) (Result, error) {
		d.MimeType = "text/plain"
		return Parse(d)
	},
		"# Plans\nFuel and fins.\n",
		"Invoice number: INV-900\nVendor: Initech\nTotal: 777.00 EUR\nDate: 2026-03-05\nDue date: 2026-04-04\n",
		"\x00\xff\u2028 Invoice No INV-\n",
	)
}

// FuzzDOCX reads a DOCX's text (archive/zip and encoding/xml), as Parse
// does in the worker. A PDF's library is fuzzed in worker processes
// instead (isolate's FuzzPDF), since a hostile PDF can hang it.
func FuzzDOCX(f *testing.F) {
	fuzzInterpreter(f, func(d Document) (Result, error) {
		d.MimeType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
		return Parse(d)
	},
		string(interprettest.MakeDOCX("Analytical Engines Ltd", "Invoice No: INV-7", "Total: EUR 980.00")),
		string(interprettest.MakeDOCX()),
	)
}

// BenchmarkHostile reads the hostile files of issue #34 at full scale
// (before the fix: 5k nested multiparts 6.7 s, 10k 25.8 s, a 1 MB vCard
// 7.6 s, a 2 MB calendar 65 s). Run it with -benchtime=1x -benchmem.
func BenchmarkHostile(b *testing.B) {
	for _, c := range []struct {
		name string
		read func(Document) (Result, error)
		data []byte
	}{
		{"eml-5k-levels", interpretEmail, interprettest.NestedEmail(5_000)},
		{"eml-10k-levels", interpretEmail, interprettest.NestedEmail(10_000)},
		{"eml-20k-levels", interpretEmail, interprettest.NestedEmail(20_000)},
		{"vcf-1MB-folded", interpretVCard, interprettest.FoldedVCard(1 << 20)},
		{"ics-2MB-folded", interpretICS, interprettest.FoldedICS(2 << 20)},
		{"ics-1MB-folded", interpretICS, interprettest.FoldedICS(1 << 20)},
		{"csv-1M-columns", interpretCSV, interprettest.WideCSV(1_000_000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				_, _ = c.read(Document{Data: c.data, Filename: "hostile"})
			}
		})
	}
}
