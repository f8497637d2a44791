package interpret

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// docxText extracts a Word document's text from word/document.xml: the
// text runs (w:t) of each paragraph (w:p), tabs and breaks kept. A DOCX
// is a ZIP of XML parts (ECMA-376), which archive/zip and encoding/xml read
// without a dependency; the Go DOCX libraries (for writing documents, or
// wrapping unidoc under a commercial licence) add nothing here.
func docxText(data []byte) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", unreadable("docx: %v", err)
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
		}
	}
	if doc == nil {
		return "", unreadable("docx: no word/document.xml")
	}
	rc, err := doc.Open()
	if err != nil {
		return "", unreadable("docx: %v", err)
	}
	defer rc.Close()
	// Bounded: a document.xml that decompresses to gigabytes is refused.
	dec := xml.NewDecoder(io.LimitReader(rc, 256<<20))
	var b strings.Builder
	inText, depth := false, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", unreadable("docx: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return "", tooComplex(limitXMLDepth, "docx: elements nested more than %d deep", maxXMLDepth)
			}
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteByte('\t')
			case "br", "cr":
				b.WriteByte('\n')
			}
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				b.WriteByte('\n')
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
	}
	return b.String(), nil
}
