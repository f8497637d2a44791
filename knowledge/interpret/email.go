package interpret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// interpretEmail reads an RFC 5322 message with MIME parts: a contact for
// every address of From, To, Cc and Reply-To (named by its display name,
// or else its address), a note with the subject and the text body (the
// text/plain part, or the HTML part without its tags), dated by the Date
// header, and every attachment as a file of its own.
func interpretEmail(d Document) (Result, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(d.Data))
	if err != nil {
		return Result{}, unreadable("eml: %v", err)
	}
	dec := new(mime.WordDecoder)
	header := func(k string) string {
		v := msg.Header.Get(k)
		if s, err := dec.DecodeHeader(v); err == nil {
			return s
		}
		return v
	}
	headerEnd := int64(bytes.Count(d.Data[:len(d.Data)-bodyLen(msg, d.Data)], []byte("\n")))
	r := Result{Interpreter: "eml"}
	seen := map[string]bool{}
	for _, k := range []string{"From", "To", "Cc", "Reply-To"} {
		list, err := msg.Header.AddressList(k)
		if err != nil {
			continue
		}
		for _, a := range list {
			addr := strings.ToLower(a.Address)
			if seen[addr] {
				continue
			}
			seen[addr] = true
			name := strings.TrimSpace(a.Name)
			if name == "" {
				name = addr
			}
			r.Records = append(r.Records, Record{
				Entity: map[string]any{"entity_type": "contact", "name": name, "email": addr},
				Range:  Range{Unit: "line", Start: 1, End: max(headerEnd, 1)},
			})
		}
	}
	body, attachments, err := new(mimeWalker).read(textproto(msg.Header), msg.Body, 0)
	var budget *TooComplexError
	if errors.As(err, &budget) {
		return Result{}, err
	}
	if err != nil {
		return Result{}, unreadable("eml: %v", err)
	}
	r.Attachments = attachments
	subject := strings.TrimSpace(header("Subject"))
	if subject == "" {
		subject = "(no subject)"
	}
	note := map[string]any{"entity_type": "note", "content": clipEncoded(body, noteContentBytes), "tags": []any{"email"}}
	title := subject
	if t, err := msg.Header.Date(); err == nil {
		note["created_date"] = t.UTC().Format(time.RFC3339)
		title += " (" + t.UTC().Format("2006-01-02 15:04") + ")"
	}
	note["title"] = title
	for _, k := range []string{"From", "To", "Cc", "Message-Id"} {
		if v := header(k); v != "" {
			note[strings.ToLower(strings.ReplaceAll(k, "-", "_"))] = v
		}
	}
	r.Records = append(r.Records, Record{Entity: note, Range: Range{Unit: "line", Start: headerEnd + 1, End: int64(bytes.Count(d.Data, []byte("\n")) + 1)}})
	r.Title = subject
	r.Text = "Subject: " + subject + "\nFrom: " + header("From") + "\nTo: " + header("To") + "\n\n" + body
	return r, nil
}

// bodyLen is the length of the message's body in data (what follows the
// blank line after the header).
func bodyLen(msg *mail.Message, data []byte) int {
	for _, sep := range [][]byte{[]byte("\r\n\r\n"), []byte("\n\n")} {
		if i := bytes.Index(data, sep); i >= 0 {
			return len(data) - i - len(sep)
		}
	}
	return 0
}

type partHeader interface{ Get(string) string }

func textproto(h mail.Header) partHeader { return h }

// mimeWalker walks the MIME entities of one message within the budgets of
// maxMIMEDepth, maxMIMEParts and maxAttachments, counting as it reads:
// each level of nesting wraps another reader around the body, so a message
// deeper than the budget is refused before its inner levels are read.
type mimeWalker struct {
	parts, attachments int
}

// read returns the text of a MIME entity at depth (the number of
// multiparts it is inside) and its attachments, walking multiparts.
func (w *mimeWalker) read(h partHeader, body io.Reader, depth int) (string, []Attachment, error) {
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType = "text/plain"
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		if depth >= maxMIMEDepth {
			return "", nil, tooComplex(limitMIMEDepth, "eml: multiparts nested more than %d deep", maxMIMEDepth)
		}
		mr := multipart.NewReader(body, params["boundary"])
		var plain, html string
		var atts []Attachment
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return "", nil, err
			}
			if w.parts++; w.parts > maxMIMEParts {
				return "", nil, tooComplex(limitMIMEParts, "eml: more than %d MIME parts", maxMIMEParts)
			}
			disp, dparams, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
			ct, cparams, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			name := dparams["filename"]
			if name == "" {
				name = cparams["name"]
			}
			if disp == "attachment" || (name != "" && !strings.HasPrefix(ct, "text/")) {
				if w.attachments++; w.attachments > maxAttachments {
					return "", nil, tooComplex(limitAttachments, "eml: more than %d attachments", maxAttachments)
				}
				data, err := io.ReadAll(decodeTransfer(p.Header.Get("Content-Transfer-Encoding"), p))
				if err != nil {
					return "", nil, err
				}
				if s, err := new(mime.WordDecoder).DecodeHeader(name); err == nil {
					name = s
				}
				atts = append(atts, Attachment{Filename: name, MimeType: ct, Data: data})
				continue
			}
			text, inner, err := w.read(p.Header, p, depth+1)
			if err != nil {
				return "", nil, err
			}
			atts = append(atts, inner...)
			switch {
			case strings.HasPrefix(ct, "text/html") && html == "":
				html = text
			case plain == "" && text != "":
				plain = text
			}
		}
		if plain == "" {
			plain = html
		}
		return plain, atts, nil
	}
	data, err := io.ReadAll(decodeTransfer(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		return "", nil, err
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if mediaType == "text/html" {
		text = htmlText(text)
	}
	return strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")), nil, nil
}

func decodeTransfer(enc string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &lineStripper{r: r})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// lineStripper drops CR and LF, which base64 bodies are wrapped with.
type lineStripper struct{ r io.Reader }

func (l *lineStripper) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	k := 0
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			p[k] = b
			k++
		}
	}
	return k, err
}

var (
	htmlDrop  = regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>`)
	htmlBreak = regexp.MustCompile(`(?i)<(br|/p|/div|/li|/tr|/h[1-6])[^>]*>`)
	htmlTag   = regexp.MustCompile(`<[^>]*>`)
	htmlSpace = regexp.MustCompile(`[ \t]+`)
)

// htmlText is an HTML body's text: scripts and styles dropped, block ends
// as line breaks, tags removed, the common entities decoded.
func htmlText(s string) string {
	s = htmlDrop.ReplaceAllString(s, "")
	s = htmlBreak.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, "")
	s = strings.NewReplacer("&nbsp;", " ", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'").Replace(s)
	return htmlSpace.ReplaceAllString(s, " ")
}
