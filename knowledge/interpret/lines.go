package interpret

import (
	"strings"
)

// contentLine is one logical line of an iCalendar or vCard file (RFC 5545
// §3.1, RFC 6350 §3.2): folded lines joined, with the physical lines it
// spans, its name, parameters and value.
type contentLine struct {
	name   string            // upper case
	params map[string]string // upper-case keys
	value  string
	first  int64 // 1-based physical lines
	last   int64
}

// contentLines unfolds and splits a text of content lines.
func contentLines(data []byte) []contentLine {
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), "\ufeff"), "\r\n", "\n")
	var out []contentLine
	for i, raw := range strings.Split(text, "\n") {
		n := int64(i + 1)
		if (strings.HasPrefix(raw, " ") || strings.HasPrefix(raw, "\t")) && len(out) > 0 {
			out[len(out)-1].value += raw[1:]
			out[len(out)-1].last = n
			continue
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		head, value, ok := splitUnquoted(raw, ':')
		if !ok {
			continue
		}
		parts := strings.Split(head, ";")
		cl := contentLine{name: strings.ToUpper(strings.TrimSpace(parts[0])), params: map[string]string{}, value: value, first: n, last: n}
		// "item1.EMAIL" (Apple's grouping): the group is dropped.
		if i := strings.LastIndexByte(cl.name, '.'); i >= 0 {
			cl.name = cl.name[i+1:]
		}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			cl.params[strings.ToUpper(k)] = strings.Trim(v, `"`)
		}
		out = append(out, cl)
	}
	return out
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

// unescapeText undoes RFC 5545/6350 text escapes.
func unescapeText(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\N`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`)
	return strings.TrimSpace(r.Replace(s))
}
