package bert

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The ids of the special tokens in vocab.txt.
const (
	idUnknown = 100 // [UNK]
	idCLS     = 101 // [CLS], before every sequence
	idSEP     = 102 // [SEP], after every sequence
)

// maxWordRunes is the longest word WordPiece splits; a longer one becomes
// [UNK] (max_input_chars_per_word).
const maxWordRunes = 100

// specialTokens are matched in the raw text before anything else, as the
// reference tokenizer matches its added tokens: "[CLS]" in a text is the
// id 101, not the pieces of "[", "cls" and "]".
var specialTokens = []struct {
	text string
	id   int32
}{{"[PAD]", 0}, {"[UNK]", idUnknown}, {"[CLS]", idCLS}, {"[SEP]", idSEP}, {"[MASK]", 103}}

// Tokenizer is the BERT uncased tokenizer (of all-MiniLM-L6-v2 and
// bge-small-en-v1.5), as the
// Hugging Face fast tokenizer of its tokenizer.json runs it: added special
// tokens are matched first; then the BertNormalizer (control characters
// dropped, white space to spaces, spaces around CJK ideographs, accents
// stripped by NFD, lower case), the BertPreTokenizer (words split at white
// space and around each punctuation character) and WordPiece (greedy
// longest match with "##" continuations; a word with no cover, or of more
// than 100 characters, is [UNK]). Encode returns the ids without the
// [CLS] and [SEP] the encoder adds around each sequence.
type Tokenizer struct {
	vocab map[string]int32
}

// NewTokenizer reads vocab.txt: one piece per line, the line number being
// the id.
func NewTokenizer(vocabTxt []byte) (*Tokenizer, error) {
	var pieces []string
	sc := bufio.NewScanner(bytes.NewReader(vocabTxt))
	for sc.Scan() {
		pieces = append(pieces, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bert: vocabulary: %w", err)
	}
	return NewTokenizerOf(pieces)
}

// NewTokenizerOf makes the tokenizer of a vocabulary given as its pieces,
// the index being the id. The special tokens must have BERT's ids.
func NewTokenizerOf(pieces []string) (*Tokenizer, error) {
	t := &Tokenizer{vocab: make(map[string]int32, len(pieces))}
	for id, p := range pieces {
		if _, dup := t.vocab[p]; dup {
			return nil, fmt.Errorf("bert: vocabulary: piece %q twice", p)
		}
		t.vocab[p] = int32(id)
	}
	for _, s := range specialTokens {
		if id, ok := t.vocab[s.text]; !ok || id != s.id {
			return nil, fmt.Errorf("bert: vocabulary: %s is not id %d", s.text, s.id)
		}
	}
	return t, nil
}

// VocabularySize is the number of pieces.
func (t *Tokenizer) VocabularySize() int { return len(t.vocab) }

// Encode returns the token ids of text, without [CLS] and [SEP].
func (t *Tokenizer) Encode(text string) []int32 {
	var ids []int32
	for text != "" {
		// The earliest special token in what is left, if any.
		at, found := len(text), -1
		for i, s := range specialTokens {
			if j := strings.Index(text[:at], s.text); j >= 0 {
				at, found = j, i
			}
		}
		ids = t.encodePlain(ids, text[:at])
		if found < 0 {
			break
		}
		ids = append(ids, specialTokens[found].id)
		text = text[at+len(specialTokens[found].text):]
	}
	return ids
}

// encodePlain appends the ids of text, which holds no special token.
func (t *Tokenizer) encodePlain(ids []int32, text string) []int32 {
	for _, word := range preTokenize(normalize(text)) {
		ids = t.wordPiece(ids, word)
	}
	return ids
}

// normalize is the BertNormalizer of the reference with clean_text,
// handle_chinese_chars, strip_accents and lowercase on, in its order.
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	decomposed := norm.NFD.String(b.String())
	b.Reset()
	for _, r := range decomposed {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return strings.ToLower(b.String())
}

// isWhitespace is Unicode's White_Space property (Rust's
// char::is_whitespace); tabs and line ends count.
func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.White_Space, r)
}

// isControl is the reference's is_control: the "other" categories (Cc,
// Cf, Co, Cs and unassigned code points) except tab and line ends.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isCJK reports whether r is in one of the CJK Unified Ideographs blocks
// that BERT puts spaces around (Hangul, kana and CJK punctuation are not).
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// isPunctuation is BERT's: ASCII punctuation (which includes symbols such
// as $, + and ~) or a Unicode punctuation character.
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7F && !(r >= '0' && r <= '9') && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// preTokenize splits normalised text into words at white space, and
// around each punctuation character, which is a word of its own.
func preTokenize(text string) []string {
	var words []string
	start := -1
	for i, r := range text {
		switch {
		case isWhitespace(r) || isPunctuation(r):
			if start >= 0 {
				words = append(words, text[start:i])
				start = -1
			}
			if !isWhitespace(r) {
				words = append(words, text[i:i+utf8.RuneLen(r)])
			}
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		words = append(words, text[start:])
	}
	return words
}

// wordPiece appends the pieces of word: the longest vocabulary entry that
// starts it, then the longest "##" entry that starts the rest, and so on;
// [UNK] alone when some rest has no such entry or the word is too long.
func (t *Tokenizer) wordPiece(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > maxWordRunes {
		return append(ids, idUnknown)
	}
	n := len(ids)
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			piece := word[start:end]
			if start > 0 {
				piece = "##" + piece
			}
			if id, ok := t.vocab[piece]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], idUnknown)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}
