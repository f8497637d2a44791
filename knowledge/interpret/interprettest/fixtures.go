// Package interprettest generates the files the interpreters are tested with
// (no binary fixture is committed): a PDF, a DOCX, an e-mail with an
// attachment, a calendar and address cards.
package interprettest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
)

// The fixtures are generated here: no binary file is committed.

// MakePDF writes a one-page PDF (PDF 1.4, Helvetica, WinAnsi) with one text
// line per entry, top to bottom.
func MakePDF(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td 16 TL\n")
	for i, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		if i > 0 {
			content.WriteString("T* ")
		}
		fmt.Fprintf(&content, "(%s) Tj\n", l)
	}
	content.WriteString("ET")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	return PDFObjects(objs...)
}

// PDFObjects writes objects 1… (object 1 the catalog) as a PDF 1.4 file
// with a correct cross-reference table: the well-formed frame of a PDF
// whose objects a test chooses, hostile ones included.
func PDFObjects(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// MakeDOCX writes a minimal Word document with one paragraph per entry.
func MakeDOCX(paragraphs ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("[Content_Types].xml")
	w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`))
	w, _ = zw.Create("word/document.xml")
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for _, p := range paragraphs {
		// Two runs per paragraph, as Word splits them.
		half := len(p) / 2
		fmt.Fprintf(&doc, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r><w:r><w:t>%s</w:t></w:r></w:p>`, p[:half], p[half:])
	}
	doc.WriteString(`</w:body></w:document>`)
	w.Write([]byte(doc.String()))
	zw.Close()
	return b.Bytes()
}

// SampleEmail is a multipart message with a text part, an HTML
// alternative and a CSV attachment.
const SampleEmail = "From: \"Ada Lovelace\" <ada@example.com>\r\n" +
	"To: Charles Babbage <charles@example.com>, team@example.com\r\n" +
	"Cc: =?UTF-8?Q?Mar=C3=ADa_L=C3=B3pez?= <maria@example.com>\r\n" +
	"Subject: =?UTF-8?Q?Engine_notes_=E2=80=93_March?=\r\n" +
	"Date: Mon, 02 Mar 2026 09:30:00 +0100\r\n" +
	"Message-ID: <abc@example.com>\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"outer\"\r\n" +
	"\r\n" +
	"--outer\r\n" +
	"Content-Type: multipart/alternative; boundary=\"inner\"\r\n" +
	"\r\n" +
	"--inner\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"The analytical engine weaves algebraic patterns =E2=80=93 see the table.\r\n" +
	"--inner\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"\r\n" +
	"<p>The analytical engine weaves <b>algebraic</b> patterns</p>\r\n" +
	"--inner--\r\n" +
	"--outer\r\n" +
	"Content-Type: text/csv; name=\"costs.csv\"\r\n" +
	"Content-Disposition: attachment; filename=\"costs.csv\"\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"ZGF0ZSxkZXNjcmlwdGlvbixhbW91bnQKMjAyNi0wMy0wMSxHZWFycywtMTIwLjUwCg==\r\n" +
	"--outer--\r\n"

// SampleICS is a calendar of two events, one with a folded summary.
const SampleICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:ev1@example.com\r\nDTSTART:20260310T140000Z\r\nDTEND:20260310T150000Z\r\n" +
	"SUMMARY:Design review\r\nLOCATION:Room 4\\, 2nd floor\r\nDESCRIPTION:Walk through the engine\\n design.\r\n" +
	"ORGANIZER;CN=Ada Lovelace:mailto:ada@example.com\r\nATTENDEE;CN=Charles:mailto:charles@example.com\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:ev2@example.com\r\nDTSTART;VALUE=DATE:20260401\r\nSUMMARY:Quarterly plan\r\n" +
	" ning day\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// SampleVCF is two address cards, vCard 3.0 and 4.0.
const SampleVCF = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEMAIL;TYPE=work:ada@example.com\r\n" +
	"EMAIL;TYPE=home:ada@home.example\r\nTEL;TYPE=cell:+44 20 7946 0000\r\nORG:Analytical Engines Ltd\r\nTITLE:Mathematician\r\n" +
	"BDAY:18151210\r\nEND:VCARD\r\n" +
	"BEGIN:VCARD\r\nVERSION:4.0\r\nN:Babbage;Charles;;;\r\nEMAIL:charles@example.com\r\nEND:VCARD\r\n"
