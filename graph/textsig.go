package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextSig is a signature of the words of an entity's text, small enough to
// be read with its statistics (EntityStat.TextSig): it tells that a word is
// not in the text without the text being read. The text is the entity's
// type, its canonical name and the scalar values at the top of its
// snapshot, lower-cased (strings.ToLower) and cut into runs of letters and
// digits; the signature is a Bloom filter of the byte trigrams inside those
// runs. A lower-case word of letters and digits that such text contains
// lies inside one run, so every trigram of it is in the filter and
// MayContain never says no to it. It may say yes to a word the text does
// not hold: each trigram is a false yes with a chance of about
// 1−exp(−t/512) for t distinct trigrams in the text (18% at 100, 44% at
// 300), and a word needs all of its trigrams.
//
// Numbers are not summarised trigram by trigram, since a backend may give
// a number back in another notation than it was written in (PostgreSQL's
// jsonb writes 1e21 as 1000000000000000000000): a text with a number may
// hold any trigram with an ASCII digit.
//
// A signature also holds the SHA-256 of the entity's EntityText when that
// text is the same for the entity as every backend gives it back, which
// is when its strings are UTF-8 (TextHash; EntityText writes each number
// in one notation): a context load finds the entity's embedding of that
// text, cached or stored, without reading the snapshot.
//
// Drivers store EntityTextSig(e) with every entity they write and give it
// back with the entity's statistics. A nil signature (an entity written
// before signatures were kept), one of another version, and the one-byte
// signature of a snapshot EntityTextSig cannot summarise say nothing:
// MayContain is true for every word.
type TextSig []byte

const (
	textSigNone    = 0 // the one byte of a signature that says nothing
	textSigVersion = 2 // version 1 had no text hash; MayContain reads both
	textSigBits    = 512
	textSigLenV1   = 2 + textSigBits/8          // version, flags, bits
	textSigLen     = textSigLenV1 + sha256.Size // and the text hash
	textSigNumbers = 1                          // flag: the text has a number
	textSigHashed  = 2                          // flag: the text hash is set
)

// EntityTextSig returns the signature of e's text (see TextSig): its type,
// canonical name and top-level snapshot strings and numbers (a
// json.Number is a valid JSON number: drivers refuse to write others). It
// depends on which values are numbers, not on how they are written, so
// that it is the same for the entity a backend gives back. When the
// snapshot holds a top-level value of another kind than JSON decodes to (a
// []string set in Go, say), whose text it cannot foresee, it is a
// signature that says nothing: never nil, so that a stored NULL always
// means an entity written before signatures were kept.
func EntityTextSig(e Entity) TextSig {
	s := make(TextSig, textSigLen)
	s[0] = textSigVersion
	s.add(e.Type)
	s.add(e.CanonicalName)
	exact := utf8.ValidString(e.Type) && utf8.ValidString(e.CanonicalName)
	for _, v := range e.Snapshot {
		switch v := v.(type) {
		case string:
			s.add(v)
			exact = exact && utf8.ValidString(v)
		case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			s[1] |= textSigNumbers
			_, ok := canonicalNumber(v)
			exact = exact && ok
		case bool, nil, []any, map[string]any:
		default:
			return TextSig{textSigNone}
		}
	}
	// Bytes that are not UTF-8 may come back as U+FFFD, and a number
	// numberText leaves as written in another notation: the text read
	// back would not be this one.
	if exact {
		h := sha256.Sum256([]byte(EntityText(e)))
		copy(s[textSigLenV1:], h[:])
		s[1] |= textSigHashed
	}
	return s
}

// TextHash returns the hex SHA-256 of the EntityText of the entity the
// signature was made from, when the signature holds it (see TextSig), and
// whether it does.
func (s TextSig) TextHash() (string, bool) {
	if len(s) != textSigLen || s[0] != textSigVersion || s[1]&textSigHashed == 0 {
		return "", false
	}
	return hex.EncodeToString(s[textSigLenV1:]), true
}

// add adds the trigrams of the runs of letters and digits of text,
// lower-cased. Bytes that are not UTF-8 are left out, so that the runs
// they separate are one run here: a caller may drop them too
// (strings.ToValidUTF8), or see U+FFFD, which a JSON round trip puts in
// their place and which only cuts runs shorter.
func (s TextSig) add(text string) {
	text = strings.ToLower(strings.ToValidUTF8(text, ""))
	start := -1 // where the current run began, or -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			s.addRun(text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		s.addRun(text[start:])
	}
}

func (s TextSig) addRun(run string) {
	for i := 0; i+3 <= len(run); i++ {
		b := trigramBit(run[i], run[i+1], run[i+2])
		s[2+b/8] |= 1 << (b % 8)
	}
}

// trigramBit is the bit of the filter a byte trigram sets.
func trigramBit(a, b, c byte) uint32 {
	return (uint32(a) | uint32(b)<<8 | uint32(c)<<16) * 0x9E3779B1 >> (32 - 9)
}

// MayContain reports whether the text s summarises may contain word, a
// lower-case word: false only when it cannot. A word shorter than three
// bytes, or with a character that is not a letter or a digit, may be in
// any text.
func (s TextSig) MayContain(word string) bool {
	known := (len(s) == textSigLen && s[0] == textSigVersion) || (len(s) == textSigLenV1 && s[0] == 1)
	if !known || len(word) < 3 {
		return true
	}
	for _, r := range word {
		// A byte that is not UTF-8 decodes as utf8.RuneError, not a
		// letter either.
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return true
		}
	}
	numbers := s[1]&textSigNumbers != 0
	for i := 0; i+3 <= len(word); i++ {
		a, b, c := word[i], word[i+1], word[i+2]
		if numbers && (isDigit(a) || isDigit(b) || isDigit(c)) {
			continue
		}
		bit := trigramBit(a, b, c)
		if s[2+bit/8]&(1<<(bit%8)) == 0 {
			return false
		}
	}
	return true
}

// MayContainAny reports whether the text s summarises may contain one of
// words (see MayContain).
func (s TextSig) MayContainAny(words []string) bool {
	for _, w := range words {
		if s.MayContain(w) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// TextSigBackfiller is an optional capability of a Driver: giving the
// entities stored without a text signature (those written before the
// driver kept them) their own. The embedded, PostgreSQL and Neo4j drivers
// have it.
type TextSigBackfiller interface {
	// BackfillTextSigs stores EntityTextSig of up to limit entities, of
	// any user, that have none and an id above after, in id order, and
	// returns the last of their ids ("" when there was none) and how many
	// it stored. An entity written meanwhile keeps the signature its
	// write stored. A driver that keeps completion keys (EntityCompleter)
	// stores the entity's NameKeys with its signature: its migration
	// cleared the signatures of the entities stored without keys (on
	// Neo4j, the entities without name_keys are found as those without
	// a signature are, and given their keys).
	BackfillTextSigs(ctx context.Context, after string, limit int) (last string, n int, err error)
}

// textSigBatch is how many entities BackfillTextSigs gives their
// signatures at a time (one transaction each on the embedded store, which
// other writers wait for).
const textSigBatch = 500

// BackfillTextSigs gives every entity of d stored without a text signature
// its own, a batch at a time, and returns how many it gave one: what a
// process does once at start, so that entities stored before the
// signatures were kept are screened by them too. progress, when not nil,
// is told the running total after each batch. A driver without the
// capability has nothing to do.
func BackfillTextSigs(ctx context.Context, d Driver, progress func(done int)) (int, error) {
	b, ok := d.(TextSigBackfiller)
	if !ok {
		return 0, nil
	}
	total, after := 0, ""
	for {
		last, n, err := b.BackfillTextSigs(ctx, after, textSigBatch)
		total += n
		if err != nil || last == "" {
			return total, err
		}
		if progress != nil {
			progress(total)
		}
		after = last
	}
}
