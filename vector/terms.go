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
// Common English function words ("the", "on", "when", …) are left out:
// with any-word matching they would match nearly every memory, and
// PostgreSQL's english configuration drops them anyway, so both backends
// match alike. Because a term holds no punctuation, drivers can put it in
// a full-text query without escaping.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if seen[w] || isStopWord(w) {
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

// isStopWord reports whether w (lower-cased) is a common English function
// word, from the list PostgreSQL's english configuration ignores.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "did", "do",
		"does", "doing", "don", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
		"having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
		"is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of",
		"off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "s", "same",
		"she", "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves",
		"then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "you",
		"your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}
