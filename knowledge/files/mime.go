package files

import (
	"mime"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// Supported lists the MIME types Cairn stores. Images are kept (and can be
// read back) but not interpreted: there is no OCR.
var Supported = []string{
	"application/pdf",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"text/plain", "text/markdown", "text/csv", "application/json",
	"message/rfc822", "text/calendar", "text/vcard",
	"image/png", "image/jpeg", "image/tiff",
}

// textual types a plain-text detection may be refined to by the file's
// extension or the type the client declared: the bytes cannot tell a
// Markdown file from plain text, but they can tell either from a PDF.
var textual = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain",
	".csv": "text/csv", ".json": "application/json", ".eml": "message/rfc822",
	".ics": "text/calendar", ".vcf": "text/vcard", ".vcard": "text/vcard",
}

// DetectType returns the MIME type of a file from its first bytes (head
// holds up to the first 3 KB), refined by the filename's extension or the
// declared type only where the bytes say "text" and the refinement is a
// text type; it never takes a client's word over what the bytes show.
//
// It uses github.com/gabriel-vasile/mimetype rather than
// net/http.DetectContentType, which knows neither DOCX (it says
// application/zip), CSV, iCalendar, vCard nor e-mail.
func DetectType(head []byte, filename, declared string) string {
	m := mimetype.Detect(head)
	detected := m.String()
	if i := strings.IndexByte(detected, ';'); i >= 0 {
		detected = detected[:i]
	}
	switch {
	case m.Is("text/vcard") || m.Is("text/x-vcard"):
		return "text/vcard"
	case m.Is("text/calendar"):
		return "text/calendar"
	case m.Is("message/rfc822"):
		return "message/rfc822"
	}
	if !m.Is("text/plain") && detected != "text/csv" && detected != "application/json" {
		return detected
	}
	if t, ok := textual[strings.ToLower(filepath.Ext(filename))]; ok {
		return t
	}
	if d, _, err := mime.ParseMediaType(declared); err == nil && slices.Contains(Supported, d) && isText(d) {
		return d
	}
	if detected == "text/csv" || detected == "application/json" {
		return detected
	}
	if looksLikeEmail(head) {
		return "message/rfc822"
	}
	return "text/plain"
}

func isText(t string) bool {
	return strings.HasPrefix(t, "text/") || t == "application/json" || t == "message/rfc822"
}

// looksLikeEmail reports whether a text starts with RFC 5322 header lines
// naming a sender and a recipient or subject.
func looksLikeEmail(head []byte) bool {
	s := strings.ToLower(string(head))
	end := strings.Index(s, "\n\n")
	if end < 0 {
		end = strings.Index(s, "\r\n\r\n")
	}
	if end < 0 {
		return false
	}
	h := "\n" + strings.ReplaceAll(s[:end], "\r\n", "\n")
	return strings.Contains(h, "\nfrom:") && (strings.Contains(h, "\nto:") || strings.Contains(h, "\nsubject:"))
}
