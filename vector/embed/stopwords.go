package embed

// stopWeight scales every feature of an English function word. They are
// kept, not dropped, so that a query made only of them still matches, but
// they no longer make unrelated sentences look alike because both contain
// "the".
const stopWeight = 0.2

// isStopWord reports whether word (lower-cased) is a common English function
// word; one-letter words never reach it. A switch rather than a map keeps
// the list a constant, with no package state.
func isStopWord(word []byte) bool {
	switch string(word) {
	case "about", "after", "all", "also", "am", "an", "and", "any", "are",
		"as", "at", "be", "been", "before", "being", "but", "by", "can",
		"could", "did", "do", "does", "doing", "for", "from", "had", "has",
		"have", "having", "he", "her", "here", "hers", "him", "his", "how",
		"if", "in", "into", "is", "it", "its", "just", "me", "more",
		"most", "my", "no", "nor", "not", "of", "off", "on", "once", "only",
		"or", "other", "our", "ours", "out", "over", "own", "same", "she",
		"should", "so", "some", "such", "than", "that", "the", "their",
		"theirs", "them", "then", "there", "these", "they", "this", "those",
		"through", "to", "too", "under", "until", "up", "very", "was", "we",
		"were", "what", "when", "where", "which", "while", "who", "whom",
		"why", "will", "with", "would", "you", "your", "yours":
		return true
	}
	return false
}
