package interprettest

import (
	"fmt"
	"strings"
)

// The hostile files of issue #34 that the interpreters' tests and the
// end-to-end test of serve share, generated at the size a test asks for.

// NestedEmail is a message of depth multiparts nested in one another, with
// a text part innermost.
func NestedEmail(depth int) []byte {
	var b strings.Builder
	b.WriteString("From: a@example.com\nTo: b@example.com\nSubject: deep\nMIME-Version: 1.0\n")
	for i := range depth {
		fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n", i, i)
	}
	b.WriteString("Content-Type: text/plain\n\nhello\n")
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\n", i)
	}
	return []byte(b.String())
}

// FlatEmail is a message of one multipart with n parts, attachments or
// inline text.
func FlatEmail(n int, attachments bool) []byte {
	var b strings.Builder
	b.WriteString("From: a@example.com\nSubject: many\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=sep\n\n")
	for i := range n {
		b.WriteString("--sep\n")
		if attachments {
			fmt.Fprintf(&b, "Content-Type: text/csv\nContent-Disposition: attachment; filename=f%d.csv\n\na,b\n", i)
		} else {
			fmt.Fprintf(&b, "Content-Type: text/plain\n\npart %d\n", i)
		}
	}
	b.WriteString("--sep--\n")
	return []byte(b.String())
}

// foldedLines is a file whose property name is folded over physical lines
// of 16 bytes, up to about size bytes, between head and tail.
func foldedLines(head, name, tail string, size int) []byte {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(name + ":start\n")
	for b.Len() < size-len(tail)-17 {
		b.WriteString(" 0123456789abcde\n")
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// FoldedVCard is a card whose note is folded over 16-byte lines, about size
// bytes in all.
func FoldedVCard(size int) []byte {
	return foldedLines("BEGIN:VCARD\nVERSION:3.0\nFN:Ada Lovelace\n", "NOTE", "END:VCARD\n", size)
}

// FoldedICS is a calendar whose event's description is folded over 16-byte
// lines, about size bytes in all.
func FoldedICS(size int) []byte {
	return foldedLines("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:1\nSUMMARY:x\nDTSTART:20260301T100000Z\n",
		"DESCRIPTION", "END:VEVENT\nEND:VCALENDAR\n", size)
}

// WideCSV is a header of cols columns and one row.
func WideCSV(cols int) []byte {
	row := strings.Repeat("x,", cols-1) + "x\n"
	return []byte(row + row)
}
