package bge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxLabel is the longest speaker label withoutSpeaker removes, in bytes.
const maxLabel = 40

// withoutSpeaker returns text without a leading speaker label: one to
// three words that each start with an upper-case letter and hold only
// letters, digits, full stops, apostrophes and hyphens, then a colon and
// white space, with something after it ("Maya: I adopted a greyhound",
// "Dr. Okafor: ...", "User: ..."). Other texts are returned as they are:
// a lower-case start (entity texts, "person: Ada"), a time ("10:30
// standup"), a label alone.
//
// The label says who said something, not what: embedded, it makes every
// turn of a speaker alike to a question that names them, and the nearest
// turns are that speaker's, whatever they said. Memory search still reads
// the label (the text signal, BM25, and the results keep it); only the
// vector leaves it out. Measured in docs/memories.md ("Embedders").
func withoutSpeaker(text string) string {
	s := strings.TrimLeftFunc(text, unicode.IsSpace)
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > maxLabel || i+1 >= len(s) {
		return text
	}
	r, _ := utf8.DecodeRuneInString(s[i+1:])
	if !unicode.IsSpace(r) {
		return text
	}
	rest := strings.TrimLeftFunc(s[i+1:], unicode.IsSpace)
	if rest == "" || !isLabel(s[:i]) {
		return text
	}
	return rest
}

// isLabel reports whether s is one to three capitalised words (see
// withoutSpeaker).
func isLabel(s string) bool {
	words := strings.Split(s, " ")
	if len(words) > 3 {
		return false
	}
	for _, w := range words {
		first, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(first) {
			return false
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '\'' && r != '-' {
				return false
			}
		}
	}
	return true
}
