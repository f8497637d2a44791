package isolate_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/knowledge/interpret"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate/isolatetest"
)

func TestMain(m *testing.M) {
	isolatetest.ServeIfWorker()
	os.Exit(m.Run())
}

const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// TestParseMatchesInProcess checks that a worker gives what interpret.Parse
// gives in process, the oracle, for every interpreter and for a broken
// file.
func TestParseMatchesInProcess(t *testing.T) {
	t.Parallel()
	ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e1@example.com\r\nDTSTART:20250301T090000Z\r\nDTEND:20250301T100000Z\r\nSUMMARY:Board meeting\r\nLOCATION:Room 1\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	vcf := "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.com\r\nTEL:+44 20 1234 5678\r\nEND:VCARD\r\n"
	eml := "From: Ada <ada@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: Invoice\r\nMessage-Id: <m1@example.com>\r\nDate: Mon, 3 Mar 2025 10:00:00 +0000\r\n\r\nHello Bob,\r\nthe invoice is attached.\r\n"
	docs := []struct {
		name string
		doc  interpret.Document
	}{
		{"csv", interpret.Document{Filename: "contacts.csv", MimeType: "text/csv", Data: []byte("name,email,age,amount\nAda,ada@example.com,36,12.50\nBob,bob@example.com,41,7\n")}},
		{"json", interpret.Document{Filename: "items.json", MimeType: "application/json", Data: []byte(`[{"name":"Ada","tags":["a","b"],"n":1,"ok":true,"x":null,"o":{"k":"v"}}]`)}},
		{"ics", interpret.Document{Filename: "cal.ics", MimeType: "text/calendar", Data: []byte(ics)}},
		{"vcard", interpret.Document{Filename: "ada.vcf", MimeType: "text/vcard", Data: []byte(vcf)}},
		{"email", interpret.Document{Filename: "m.eml", MimeType: "message/rfc822", Data: []byte(eml)}},
		{"text", interpret.Document{Filename: "notes.md", MimeType: "text/markdown", Data: []byte("# Plans\nShip the worker.\n")}},
		{"pdf", interpret.Document{Filename: "invoice.pdf", MimeType: "application/pdf", Data: interprettest.MakePDF("Invoice INV-7", "Total: 120.00 EUR", "Date: 2025-03-01")}},
		{"docx", interpret.Document{Filename: "letter.docx", MimeType: docxType, Data: interprettest.MakeDOCX("Dear Ada,", "Thanks.")}},
		{"image", interpret.Document{Filename: "a.png", MimeType: "image/png", Data: []byte("\x89PNG")}},
		{"config", interpret.Document{Filename: "c.csv", MimeType: "text/csv", Data: []byte("a,b\n1,2\n"), Config: map[string]any{"entity_type": "thing", "n": 1.5, "list": []any{"x"}}}},
	}
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: 30 * time.Second}))
	for _, tc := range docs {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := interpret.Parse(tc.doc)
			if err != nil {
				t.Fatalf("in process: %v", err)
			}
			got, err := r.Parse(t.Context(), tc.doc)
			if err != nil {
				t.Fatalf("in a worker: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("a worker's result differs from the in-process one (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		d := interpret.Document{Filename: "broken.pdf", MimeType: "application/pdf", Data: []byte("%PDF-1.4 broken")}
		_, want := interpret.Parse(d)
		_, err := r.Parse(t.Context(), d)
		if !errors.Is(err, interpret.ErrUnreadable) || err.Error() != want.Error() {
			t.Fatalf("got %v, want %v", err, want)
		}
	})
}

// TestSelfReferencingPDFStopsAtTimeout is issue #34's PDF: in process it
// never returns; in a worker it is killed at the timeout.
func TestSelfReferencingPDFStopsAtTimeout(t *testing.T) {
	t.Parallel()
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: 2 * time.Second}))
	start := time.Now()
	_, err := r.Parse(t.Context(), interpret.Document{Filename: "loop.pdf", MimeType: "application/pdf", Data: isolatetest.SelfReferencingPDF()})
	t.Logf("the %d-byte PDF failed after %s: %v", len(isolatetest.SelfReferencingPDF()), time.Since(start).Round(time.Millisecond), err)
	wantLimit(t, err, "time")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestCPULimit lets the looping PDF run into its CPU time instead of the
// wall-clock timeout.
func TestCPULimit(t *testing.T) {
	t.Parallel()
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: time.Minute, CPUSeconds: 1}))
	_, err := r.Parse(t.Context(), interpret.Document{Filename: "loop.pdf", MimeType: "application/pdf", Data: isolatetest.SelfReferencingPDF()})
	wantLimit(t, err, "cpu")
}

// TestMemoryLimit parses a DOCX of one paragraph with millions of attributes, which takes gigabytes
// in process; the worker dies at its memory limit and the test process
// is untouched.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	data := isolatetest.AttributesDOCX(4_000_000)
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: 2 * time.Minute, MemoryBytes: 256 << 20}))
	start := time.Now()
	_, err := r.Parse(t.Context(), interpret.Document{Filename: "nested.docx", MimeType: docxType, Data: data})
	t.Logf("the %d-byte DOCX failed after %s: %v", len(data), time.Since(start).Round(time.Millisecond), err)
	wantLimit(t, err, "memory")
}

func TestOutputLimit(t *testing.T) {
	t.Parallel()
	r := isolate.New(isolatetest.Options(isolate.Options{MaxOutputBytes: 4 << 10}))
	_, err := r.Parse(t.Context(), interpret.Document{Filename: "big.txt", MimeType: "text/plain", Data: bytes.Repeat([]byte("all work and no play\n"), 1000)})
	wantLimit(t, err, "output")
}

// TestCancelKillsWorker cancels a parse that hangs: Parse returns at once
// with the context's error, and the worker process is gone.
func TestCancelKillsWorker(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(isolatetest.PIDFileEnv, pidFile)
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: time.Minute}))
	ctx, cancel := context.WithCancel(t.Context())
	var pid int
	go func() {
		// Cancel once the worker is running.
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				pid, _ = strconv.Atoi(string(b))
				time.Sleep(200 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := r.Parse(ctx, interpret.Document{Filename: "loop.pdf", MimeType: "application/pdf", Data: isolatetest.SelfReferencingPDF()})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Parse did not return after its context was cancelled")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if pid == 0 {
		t.Fatal("the worker never wrote its pid")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("worker %d still exists: kill 0: %v", pid, err)
	}
}

func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	var tc *interpret.TooComplexError
	if !errors.As(err, &tc) || tc.Limit != limit {
		t.Fatalf("got %v, want a TooComplexError for the %s limit", err, limit)
	}
	if !strings.Contains(err.Error(), limit) {
		t.Errorf("the message %q does not name the limit %q", err, limit)
	}
}

// FuzzPDF feeds fuzzed PDFs to the PDF library in worker processes, as the
// service does: the library may loop (the self-referencing page tree) or
// crash, and each parse must still end within its timeout with a result or
// an error, never take the test process with it.
func FuzzPDF(f *testing.F) {
	f.Add(interprettest.MakePDF("Analytical Engines Ltd", "INVOICE", "Invoice No: INV-7", "Total: EUR 980.00"))
	f.Add(isolatetest.SelfReferencingPDF())
	f.Add([]byte("%PDF-1.4 broken"))
	const timeout = 2 * time.Second
	r := isolate.New(isolatetest.Options(isolate.Options{Timeout: timeout}))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		res, err := r.Parse(t.Context(), interpret.Document{Filename: "fuzz.pdf", MimeType: "application/pdf", Data: data})
		if d := time.Since(start); d > timeout+10*time.Second {
			t.Fatalf("the parse took %s, past its %s timeout", d, timeout)
		}
		if err == nil && len(res.Text) > interpret.MaxResultText {
			t.Fatalf("text of %d bytes", len(res.Text))
		}
	})
}
