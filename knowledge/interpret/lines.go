package interpret

import (
	"strings"
)

// contentLine is one logical line of an iCalendar or vCard file (RFC 5545
// §3.1, RFC 6350 §3.2): folded lines joined, with the physical lines it
// spans, its name, parameters and value.
type contentLine struct {
	name   string            // upper case
	params map[string]string // upper-case keys; nil when there are none
	value  string
	first  int64 // 1-based physical lines
	last   int64
}

// contentLineReader unfolds and splits a text of content lines, one
// logical line at a time, within the budgets of maxContentLineBytes and
// maxContentLines: a folded line is joined once, in time linear in its
// length, and a file over a budget stops being read where it goes over.
type contentLineReader struct {
	rest    string // what is left to read
	n       int64  // physical lines read
	count   int    // content lines started
	pending *contentLine
	folded  strings.Builder // the pending line's value once it is folded
	isFold  bool
	size    int // the pending line's unfolded length
	err     error
}

func newContentLineReader(data []byte) *contentLineReader {
	return &contentLineReader{rest: strings.TrimPrefix(string(data), "\ufeff")}
}

// next returns the next logical line, or false at the end of the text or
// when the text is over a budget (err says which).
func (r *contentLineReader) next() (contentLine, bool) {
	for r.err == nil && r.rest != "" {
		raw, rest, _ := strings.Cut(r.rest, "\n")
		r.rest = rest
		r.n++
		raw = strings.TrimSuffix(raw, "\r")
		if (strings.HasPrefix(raw, " ") || strings.HasPrefix(raw, "\t")) && r.pending != nil {
			if r.size += len(raw) - 1; r.size > maxContentLineBytes {
				r.err = tooComplex(limitLineBytes, "line %d: a content line longer than %d bytes", r.pending.first, maxContentLineBytes)
				return contentLine{}, false
			}
			if !r.isFold {
				r.folded.Reset()
				r.folded.WriteString(r.pending.value)
				r.isFold = true
			}
			r.folded.WriteString(raw[1:])
			r.pending.last = r.n
			continue
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		head, value, ok := splitUnquoted(raw, ':')
		if !ok {
			continue
		}
		if len(raw) > maxContentLineBytes {
			r.err = tooComplex(limitLineBytes, "line %d: a content line longer than %d bytes", r.n, maxContentLineBytes)
			return contentLine{}, false
		}
		if r.count++; r.count > maxContentLines {
			r.err = tooComplex(limitContentLines, "more than %d content lines", maxContentLines)
			return contentLine{}, false
		}
		cl := parseContentLine(head, value, r.n)
		prev, had := r.take()
		r.pending, r.size = &cl, len(raw)
		if had {
			return prev, true
		}
	}
	if r.err != nil {
		return contentLine{}, false
	}
	return r.take()
}

// take returns the pending line, its folds joined, and clears it.
func (r *contentLineReader) take() (contentLine, bool) {
	if r.pending == nil {
		return contentLine{}, false
	}
	cl := *r.pending
	if r.isFold {
		cl.value = r.folded.String()
		r.folded = strings.Builder{}
		r.isFold = false
	}
	r.pending = nil
	return cl, true
}

// parseContentLine splits the head of a content line into its name and
// parameters.
func parseContentLine(head, value string, n int64) contentLine {
	name, params, hasParams := strings.Cut(head, ";")
	cl := contentLine{name: strings.ToUpper(strings.TrimSpace(name)), value: value, first: n, last: n}
	// "item1.EMAIL" (Apple's grouping): the group is dropped.
	if i := strings.LastIndexByte(cl.name, '.'); i >= 0 {
		cl.name = cl.name[i+1:]
	}
	if hasParams {
		cl.params = map[string]string{}
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			cl.params[strings.ToUpper(k)] = strings.Trim(v, `"`)
		}
	}
	return cl
}

// splitUnquoted splits s at the first sep outside double quotes.
func splitUnquoted(s string, sep byte) (string, string, bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// textUnescaper undoes RFC 5545/6350 text escapes.
var textUnescaper = strings.NewReplacer(`\n`, "\n", `\N`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`)

// unescapeText undoes RFC 5545/6350 text escapes.
func unescapeText(s string) string {
	return strings.TrimSpace(textUnescaper.Replace(s))
}
