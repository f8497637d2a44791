package interpret

import (
	"fmt"
	"unicode/utf8"
)

// Input budgets. A file is read in one pass, and each budget is checked as
// the file is read, so that a hostile file (a mail of thousands of nested
// multiparts, a CSV of a million columns) is refused after bounded work
// instead of holding a worker for minutes. Every limit is far above what
// real files need; a file over one is refused with a *TooComplexError,
// which is also ErrUnreadable: trying again will not help.
const (
	// maxMIMEDepth bounds how deeply multiparts nest in an e-mail. Real
	// mail nests a few levels (mixed › alternative › related, and again
	// for each forwarded message); every level wraps another reader around
	// the body, so depth multiplies the work of reading it.
	maxMIMEDepth = 32
	// maxMIMEParts bounds the MIME parts of one e-mail, at every level.
	maxMIMEParts = 1000
	// maxAttachments bounds the attachments of one e-mail: each becomes a
	// file of its own, interpreted by a job of its own.
	maxAttachments = 100

	// maxContentLineBytes bounds one unfolded content line of an iCalendar
	// or vCard file (a long description, an inline photo in base64).
	maxContentLineBytes = 1 << 20
	// maxContentLines bounds the content lines (properties) of one
	// iCalendar or vCard file: a large address book or a calendar of many
	// years holds a few hundred thousand.
	maxContentLines = 1_000_000
	// maxRecords bounds the records (cards, events, rows) one file gives.
	maxRecords = 200_000

	// maxTableColumns bounds the columns of a table (a CSV header, or the
	// distinct keys of a JSON array of objects); each column becomes a
	// field of every row's entity and of its type's schema.
	maxTableColumns = 1000
	// maxTableCells bounds the cells of a table, all rows together (e.g.
	// 200,000 rows of 10 columns).
	maxTableCells = 2_000_000

	// maxXMLDepth bounds how deeply the elements of a DOCX's document.xml
	// nest. Word nests a few dozen levels (tables in tables, fields,
	// content controls); the decoder keeps a frame for every open element,
	// so millions of unclosed ones ran the worker out of memory, or not,
	// depending on when the collector ran.
	maxXMLDepth = 1000
)

// TooComplexError means a file is over one of the input budgets (Limit
// names it); trying again will not help.
type TooComplexError struct {
	Limit string
}

func (e *TooComplexError) Error() string { return "interpret: file too complex: " + e.Limit }

// tooComplexDetail is a TooComplexError with what was over the limit. It
// also wraps ErrUnreadable, so that a job refused for a budget fails at
// once instead of being retried.
type tooComplexDetail struct {
	err    *TooComplexError
	detail string
}

func (e *tooComplexDetail) Error() string   { return e.err.Error() + ": " + e.detail }
func (e *tooComplexDetail) Unwrap() []error { return []error{e.err, ErrUnreadable} }

// tooComplex returns the error for a file over the budget named limit;
// errors.As finds its *TooComplexError and errors.Is ErrUnreadable.
func tooComplex(limit string, format string, args ...any) error {
	return &tooComplexDetail{err: &TooComplexError{Limit: limit}, detail: fmt.Sprintf(format, args...)}
}

// The budgets' names (TooComplexError.Limit).
const (
	limitMIMEDepth    = "mime depth"
	limitMIMEParts    = "mime parts"
	limitAttachments  = "attachments"
	limitLineBytes    = "line length"
	limitContentLines = "content lines"
	limitRecords      = "records"
	limitColumns      = "columns"
	limitCells        = "cells"
	limitXMLDepth     = "xml depth"
)

// clipEncoded cuts s on a rune boundary so that its JSON encoding, quotes
// included, is at most n bytes. The store bounds a field by its encoded
// size (knowledge.DefaultMaxFieldBytes), and escapes can make that six
// times the text's (a control character is \u0001), so a text clipped by
// its own length may still be refused. The encoding counted is
// encoding/json's with HTML escaping (<, >, & as \u003c…), which is never
// shorter than the store's, and an invalid byte counts as the \ufffd it
// becomes.
func clipEncoded(s string, n int) string {
	size := 2 // the quotes
	if n < size {
		return ""
	}
	for i := 0; i < len(s); {
		w, step := 1, 1
		if b := s[i]; b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				w = 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				w = 6
			}
		} else {
			r, rs := utf8.DecodeRuneInString(s[i:])
			w, step = rs, rs
			if r == utf8.RuneError && rs == 1 || r == '\u2028' || r == '\u2029' {
				w = 6
			}
		}
		if size+w > n {
			return s[:i]
		}
		size += w
		i += step
	}
	return s
}

// maxValueBytes bounds every text value of a record, as JSON (the store
// refuses a field over knowledge.DefaultMaxFieldBytes, 64 KiB, and with it
// the whole batch): a contact's note of a megabyte, a calendar event's
// description, a CSV cell, cut here, leave the rest of the file readable.
// A note's content has the same bound (noteContentBytes); the whole text
// is in the file's memory.
const maxValueBytes = noteContentBytes

// clipValues cuts every text value of the records (and every text in a
// list) to maxValueBytes as JSON, and returns how many it cut.
func clipValues(recs []Record) int {
	n := 0
	clip := func(v any) any {
		if s, ok := v.(string); ok && len(s) > maxValueBytes/6 {
			if c := clipEncoded(s, maxValueBytes); len(c) < len(s) {
				n++
				return c
			}
		}
		return v
	}
	for _, rec := range recs {
		for k, v := range rec.Entity {
			if list, ok := v.([]any); ok {
				for i := range list {
					list[i] = clip(list[i])
				}
				continue
			}
			rec.Entity[k] = clip(v)
		}
	}
	return n
}
