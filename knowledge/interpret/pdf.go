package interpret

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfText extracts a PDF's text, page by page, row by row from the top,
// with github.com/ledongthuc/pdf: pure Go (no cgo, no external tool),
// BSD-licensed, maintained (the fork of rsc.io/pdf that added text
// extraction; commits in 2026). It reads the text operators of a page's
// content stream with the fonts' encodings and ToUnicode maps; a scanned
// PDF (images only) has no text to give, and there is no OCR. pdfcpu,
// also pure Go and well kept, was the other candidate, but it processes
// PDFs (merge, split, validate) and has no text extraction.
func pdfText(data []byte) (text string, pages int, err error) {
	defer func() {
		// The reader panics on some malformed files; it is an unreadable
		// file, not a crash of the job.
		if r := recover(); r != nil {
			err = unreadable("pdf: %v", r)
		}
	}()
	rd, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", 0, unreadable("pdf: %v", err)
	}
	pages = rd.NumPage()
	var b strings.Builder
	for i := 1; i <= pages; i++ {
		p := rd.Page(i)
		if p.V.IsNull() {
			continue
		}
		// Content walks the page's text operators with the full text
		// matrix (Td, TD, Tm, T*, TL); its pieces are grouped into rows
		// by baseline, read from the top, left to right.
		texts := p.Content().Text
		rows := map[int64][]pdf.Text{}
		var ys []int64
		for _, t := range texts {
			y := int64(math.Round(t.Y))
			if _, ok := rows[y]; !ok {
				ys = append(ys, y)
			}
			rows[y] = append(rows[y], t)
		}
		sort.Slice(ys, func(a, c int) bool { return ys[a] > ys[c] })
		for _, y := range ys {
			row := rows[y]
			sort.SliceStable(row, func(a, c int) bool { return row[a].X < row[c].X })
			var line strings.Builder
			end := math.Inf(-1)
			for _, t := range row {
				// A gap wider than a third of the font size is a space.
				if line.Len() > 0 && t.X-end > t.FontSize/3 && !strings.HasSuffix(line.String(), " ") {
					line.WriteByte(' ')
				}
				line.WriteString(t.S)
				end = t.X + t.W
			}
			if s := strings.TrimSpace(line.String()); s != "" {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
		if i < pages {
			fmt.Fprintf(&b, "\f")
		}
	}
	return b.String(), pages, nil
}
