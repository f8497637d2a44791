package graph

import (
	"bytes"
	"context"
)

// TextScreener is an optional capability of a DriverTx: it tells, inside
// the backend, which entities cannot contain a word, so that a caller
// looking for entities whose text contains one (context loading's keyword
// scan) reads and decodes only the others. Its answer is a screen, not a
// match: it may keep an entity that holds none of the words, never drop
// one that holds any.
type TextScreener interface {
	// ScreenEntityText returns, in no particular order, those of the
	// user's entities ids whose entity type, canonical name or stored snapshot
	// (its JSON text, keys and all), lower-cased, contain one of words,
	// and every one of them with a byte outside ASCII in any of the three
	// (whose lower case the backend may not fold as Go does). Ids of no
	// entity of the user are left out. words are lower-case ASCII letters
	// and digits (ScreenableWords), at most MaxScreenWords of them.
	//
	// The screen holds for text that Go lower-cases (strings.ToLower) and
	// decodes from the snapshot: a run of ASCII letters and digits in a
	// decoded string or number is the same run in its JSON text, since
	// JSON escapes only other characters, and ASCII lower-cases alike
	// everywhere.
	ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error)
}

// MaxScreenWords is the most words ScreenEntityText is asked about.
const MaxScreenWords = 16

// ScreenableWords reports whether ScreenEntityText may be asked about
// words: 1 to MaxScreenWords non-empty words of lower-case ASCII letters
// and digits.
func ScreenableWords(words []string) bool {
	if len(words) == 0 || len(words) > MaxScreenWords {
		return false
	}
	for _, w := range words {
		if w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			if c := w[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				return false
			}
		}
	}
	return true
}

// ScreenEntityText returns, in their order, those of ids that may contain
// one of words (see TextScreener): the driver's screen when it has one and
// the words suit it, and ids themselves otherwise (every entity may).
func (tx *Tx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	s, ok := tx.DriverTx.(TextScreener)
	if !ok || len(ids) == 0 || !ScreenableWords(words) {
		return ids, nil
	}
	got, err := s.ScreenEntityText(ctx, userID, ids, words)
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(got))
	for _, id := range got {
		keep[id] = true
	}
	out := make([]string, 0, len(got))
	for _, id := range ids {
		if keep[id] {
			out = append(out, id)
			delete(keep, id) // an id given twice is kept once
		}
	}
	return out, nil
}

// WordScreen is TextScreener's rule for a driver that screens in Go rather
// than in its query language: it keeps a text that holds one of the words
// in ASCII lower case, or any byte beyond ASCII. It is not safe for
// concurrent use.
type WordScreen struct {
	words [][]byte
	buf   []byte
}

// NewWordScreen returns the screen of words (see ScreenableWords).
func NewWordScreen(words []string) *WordScreen {
	s := &WordScreen{words: make([][]byte, len(words))}
	for i, w := range words {
		s.words[i] = []byte(w)
	}
	return s
}

// Keep reports whether the text made of parts, joined by spaces, may hold
// one of the words.
func (s *WordScreen) Keep(parts ...[]byte) bool {
	s.buf = s.buf[:0]
	for _, p := range parts {
		for _, c := range p {
			if c >= 0x80 {
				return true
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			s.buf = append(s.buf, c)
		}
		s.buf = append(s.buf, ' ')
	}
	for _, w := range s.words {
		if bytes.Contains(s.buf, w) {
			return true
		}
	}
	return false
}
