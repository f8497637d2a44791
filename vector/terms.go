package vector

import (
	"strings"
	"unicode"
)

// maxTerms bounds the words of a query, so that a pasted document cannot
// turn into a full-text query of thousands of terms.
const maxTerms = 32

// Terms splits text into the distinct lower-case words, of letters and
// digits only, that full-text matching uses, in order of first occurrence.
// Because a term holds no punctuation, drivers can put it in a full-text
// query without escaping.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}
