package interpret

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// Document is a file to interpret.
type Document struct {
	Data     []byte
	MimeType string
	Filename string
	// Config is the interpretation configuration the caller asked for
	// (interpretation_config); interpreters that take none ignore it.
	Config map[string]any
	// UserID is the user the file belongs to, whose entity types the
	// model is offered (Config.Schemas).
	UserID string
}

// Range locates a record in its file: lines (1-based, inclusive) or bytes
// (0-based, end exclusive), or pages of a PDF.
type Range struct {
	Unit       string // "line", "byte" or "page"
	Start, End int64
}

// Record is one entity read from a file, as the store pipeline takes it:
// "entity_type" and its fields.
type Record struct {
	Entity map[string]any
	Range  Range
}

// Attachment is a file carried inside another (an e-mail's attachment).
type Attachment struct {
	Filename string
	MimeType string
	Data     []byte
}

// Result is what an interpreter read.
type Result struct {
	// Interpreter and Version name the code that read the file.
	Interpreter, Version string
	Records              []Record
	// Text is the file's text, kept as a memory for search.
	Text  string
	Title string
	// EntityType is the type of the records of a table, and Mapping how
	// its columns map onto that type's fields (column → field; a column
	// kept as a raw fragment maps to its own normalised name).
	EntityType string
	Mapping    map[string]string
	// Schema, when set, is the schema the records' type gets where the
	// user's data has none of that type (knowledge.StoreRequest.TypeSchemas):
	// an iCalendar event's dates are timeline events from its first file.
	// nil lets the store infer one.
	Schema *schema.Schema
	// Attachments are files found inside this one.
	Attachments []Attachment
	// Skipped says why the file was not interpreted into entities (no
	// model configured for free text, an image without OCR…).
	Skipped string
	// Config is the interpretation_config recorded with every observation
	// (the LLM's provider, model, temperature, prompt hash and code
	// version); empty for the deterministic interpreters.
	Config map[string]any
	// Meta holds facts about the file for the job's result (page_count,
	// word_count…).
	Meta map[string]any
}

// ErrUnreadable means the file is not what its type says (a broken PDF, a
// CSV with no header): trying again will not help.
var ErrUnreadable = errors.New("interpret: file cannot be read")

// TransientError is a failure that may pass (the model's endpoint answered
// 5xx or timed out): the job is retried.
type TransientError struct{ Err error }

func (e *TransientError) Error() string { return "interpret: " + e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
}

// Config configures a Set.
type Config struct {
	// LLM reads free text into entities when set; nil means free text is
	// kept as a note and its text, and the job says interpretation was
	// skipped.
	LLM *LLMConfig
	// Schemas describes the target entity types to the model, as one user
	// sees them (the user's own, global and built-in schemas): type → its
	// fields (name → JSON type); nil, or an empty answer, means the
	// built-in ones the LLM interpreter names.
	Schemas func(ctx context.Context, userID string) map[string]map[string]string
}

// Set is the interpreters Cairn has, chosen by MIME type.
type Set struct {
	llm *llmClient
}

// NewSet returns the interpreters for a configuration.
func NewSet(cfg Config) *Set {
	s := &Set{}
	if cfg.LLM != nil && cfg.LLM.BaseURL != "" {
		s.llm = newLLMClient(*cfg.LLM, cfg.Schemas)
	}
	return s
}

// Version is the version of the deterministic interpreters; it changes
// when what they produce from the same bytes changes.
const Version = "1"

// Interpret reads a document: Parse, then Enrich. It runs the parsers in
// this process; a service that reads untrusted files runs Parse in a
// child process it can kill (package isolate) and Enrich here.
func (s *Set) Interpret(ctx context.Context, d Document) (Result, error) {
	r, err := Parse(d)
	if err != nil {
		return r, err
	}
	return s.Enrich(ctx, d, r)
}

// Parse runs the deterministic interpreters on a document: every parser
// (CSV, JSON, iCalendar, vCard, e-mail, text, PDF, DOCX), no network and
// no configuration beyond the document. The same bytes give the same
// Result. Free text is kept as a note (and an invoice where one is
// labelled); Enrich reads entities from it with a model.
//
// Parse reads hostile input with third-party parsers that may loop or
// allocate without bound; it has no time or memory limit of its own.
func Parse(d Document) (Result, error) {
	var (
		r   Result
		err error
	)
	switch d.MimeType {
	case "text/csv":
		r, err = interpretCSV(d)
	case "application/json":
		r, err = interpretJSON(d)
	case "text/calendar":
		r, err = interpretICS(d)
	case "text/vcard":
		r, err = interpretVCard(d)
	case "message/rfc822":
		r, err = interpretEmail(d)
	case "text/plain", "text/markdown":
		r = freeText(d, "text", string(d.Data))
	case "application/pdf":
		var text string
		var pages int
		if text, pages, err = pdfText(d.Data); err == nil {
			r = freeText(d, "pdf", text)
			r.Meta = map[string]any{"page_count": pages}
		}
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		var text string
		if text, err = docxText(d.Data); err == nil {
			r = freeText(d, "docx", text)
		}
	default:
		r = Result{Interpreter: "none", Skipped: "no interpreter for " + d.MimeType + " (images are stored, not read: there is no OCR)"}
	}
	if err != nil {
		return r, err
	}
	if r.Version == "" {
		r.Version = Version
	}
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	if r.Text != "" {
		r.Meta["word_count"] = len(strings.Fields(r.Text))
	}
	if len(r.Text) > MaxResultText {
		// What reads the text takes much less (the file's memory 60 KiB,
		// the model 24 KiB): the rest would only cross from the worker to
		// the service (a DOCX of 250 MB of text is a 256 KB file).
		r.Text = clip(r.Text, MaxResultText)
		r.Meta["text_clipped_at"] = MaxResultText
	}
	if n := clipValues(r.Records); n > 0 {
		r.Meta["values_clipped"] = n
	}
	return r, nil
}

// MaxResultText bounds the text a Result carries (Result.Text), in bytes:
// the word count is of the whole text, the text kept its first MaxResultText.
const MaxResultText = 1 << 20

// noModel is the Skipped reason of free text read with no model.
const noModel = "no model is configured (--llm-url): the text is kept as a note and searchable; only labelled invoices are read from it without one"

// freeText keeps a text as one note (and as the memory's text), or as an
// invoice instead where the text labels one: a note holds a text only when
// nothing else was read from it (see docs/consent.md, derived data).
func freeText(d Document, name, text string) Result {
	text = strings.ToValidUTF8(text, "\uFFFD")
	lines := int64(strings.Count(text, "\n") + 1)
	title := titleOf(text, d.Filename)
	r := Result{Interpreter: name, Text: text, Title: title}
	if strings.TrimSpace(text) == "" {
		r.Skipped = "the file holds no text"
		return r
	}
	unit, end := "line", lines
	if name == "pdf" || name == "docx" {
		unit, end = "byte", int64(len(d.Data))
	}
	r.Records = []Record{{Entity: map[string]any{
		"entity_type": "note", "title": title, "content": clipEncoded(text, noteContentBytes),
	}, Range: Range{Unit: unit, Start: min(1, end), End: end}}}
	if unit == "byte" {
		r.Records[0].Range.Start = 0
	}
	if inv := textInvoice(text); inv != nil {
		// The text is the invoice's: kept as a note it would be readable
		// by agents that may read notes and not invoices. It stays in
		// the file's memory, which carries the invoice type.
		r.Records = []Record{{Entity: inv, Range: r.Records[0].Range}}
		r.Interpreter += "+invoice"
	}
	r.Skipped = noModel
	return r
}

// Enrich reads entities from the free text Parse kept (a text, PDF or
// DOCX note) with the model, when one is configured; any other Result is
// returned as it is. It needs the network and the Set's configuration,
// and runs in the service's process on the text Parse returned.
func (s *Set) Enrich(ctx context.Context, d Document, r Result) (Result, error) {
	name, _, _ := strings.Cut(r.Interpreter, "+")
	if s.llm == nil || r.Skipped != noModel || (name != "text" && name != "pdf" && name != "docx") || len(r.Records) == 0 {
		return r, nil
	}
	r.Skipped = ""
	recs, cfg, err := s.llm.extract(ctx, d.UserID, r.Text)
	if err != nil {
		return r, err
	}
	rg := r.Records[0].Range
	if len(recs) > 0 {
		// The whole text holds what the model found in it: the note
		// that kept it would show it to agents that may read notes and
		// not those types. The records replace it, and the text stays in
		// the file's memory, which carries every type found.
		r.Records = slices.DeleteFunc(r.Records, func(rec Record) bool { return rec.Entity["entity_type"] == "note" })
	}
	for _, e := range recs {
		r.Records = append(r.Records, Record{Entity: e, Range: rg})
	}
	r.Config = cfg
	r.Interpreter = name + "+llm"
	return r, nil
}

// noteContentBytes bounds a note's content (a stored field has a 64 KiB
// limit); the whole text is in the file's memory.
const noteContentBytes = 48 << 10

// titleOf is a text's first heading or line, with the filename (a note's
// title is its identity: two files that start alike are two notes), or
// else the filename.
func titleOf(text, filename string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line != "" {
			if filename != "" {
				return clip(line, 120) + " (" + clip(filename, 120) + ")"
			}
			return clip(line, 120)
		}
	}
	if filename != "" {
		return strings.TrimSuffix(filename, filepath.Ext(filename))
	}
	return "Untitled"
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
