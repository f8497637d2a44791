package embed

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// Feature weights of the local embedder. trigramWeight is the L2 mass of a
// word's trigrams: each of a word's k trigrams gets trigramWeight/sqrt(k),
// so long words do not drown short ones. Giving trigrams as much mass as the
// word itself (rather than a token 0.3) roughly tripled the gap between
// related and unrelated sentence pairs in a small hand-made evaluation,
// while an exact word match still scores above a mere variant of it.
const (
	unigramWeight = 1.0
	bigramWeight  = 0.5
	trigramWeight = 1.0
)

// Feature kinds, hashed in front of the feature bytes so that the word "abc"
// and the trigram "abc" are different features.
const (
	kindWord    = 'w'
	kindBigram  = 'b'
	kindTrigram = 't'
)

// Word boundary markers. They are neither letters nor digits, so they never
// occur inside a token and need no escaping.
const (
	markStart = '<'
	markEnd   = '>'
)

// span is one token in scratch.buf: buf[start:end] is the lower-cased word
// and buf[start-1] and buf[end] are its boundary markers.
type span struct {
	start, end int
	runes      int
}

// slot is one entry of the open-addressing feature table. n == 0 marks an
// empty slot; w is the summed weight of the feature's n occurrences.
type slot struct {
	h uint64
	w float64
	n int
}

// scratch holds the per-call buffers of the local embedder, reused across
// texts and calls to keep allocation off the hot path.
type scratch struct {
	buf    []byte // "<tok1><tok2>…", lower-cased
	toks   []span
	starts []int // rune offsets within the current padded word
	slots  []slot
	mask   uint64
}

// tokenise fills buf and toks from text.
func (s *scratch) tokenise(text string) {
	s.buf = s.buf[:0]
	s.toks = s.toks[:0]
	in := false
	var cur span
	var first rune
	end := func() {
		in = false
		cur.end = len(s.buf)
		if cur.runes == 1 && !unicode.IsDigit(first) {
			s.buf = s.buf[:cur.start-1] // drop the token and its start marker
			return
		}
		s.buf = append(s.buf, markEnd)
		s.toks = append(s.toks, cur)
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || in && unicode.IsMark(r):
			r = unicode.ToLower(r)
			if !in {
				in = true
				s.buf = append(s.buf, markStart)
				cur = span{start: len(s.buf)}
				first = r
			}
			s.buf = utf8.AppendRune(s.buf, r)
			cur.runes++
		case in:
			end()
		}
	}
	if in {
		end()
	}
}

// features fills the feature table from toks.
func (s *scratch) features() {
	n := 0
	for _, t := range s.toks {
		n += 2 + t.runes // unigram, bigram, trigrams
	}
	s.reset(n)
	prevScale := 1.0
	for i, t := range s.toks {
		word := s.buf[t.start:t.end]
		scale := 1.0
		if isStopWord(word) {
			scale = stopWeight
		}
		s.add(hashBytes(hashByte(fnvOffset, kindWord), word), unigramWeight*scale)
		if i > 0 {
			p := s.toks[i-1]
			h := hashByte(fnvOffset, kindBigram)
			h = hashBytes(h, s.buf[p.start:p.end])
			h = hashByte(h, 0)
			s.add(hashBytes(h, word), bigramWeight*min(scale, prevScale))
		}
		s.trigrams(s.buf[t.start-1:t.end+1], t.runes, scale)
		prevScale = scale
	}
}

// trigrams adds the character trigrams of padded ("<word>", runes runes
// between the markers): one per rune of the word.
func (s *scratch) trigrams(padded []byte, runes int, scale float64) {
	s.starts = s.starts[:0]
	for i := 0; i < len(padded); {
		s.starts = append(s.starts, i)
		_, size := utf8.DecodeRune(padded[i:])
		i += size
	}
	s.starts = append(s.starts, len(padded))
	w := trigramWeight * scale / math.Sqrt(float64(runes))
	for i := 0; i+3 < len(s.starts); i++ {
		g := padded[s.starts[i]:s.starts[i+3]]
		s.add(hashBytes(hashByte(fnvOffset, kindTrigram), g), w)
	}
}

// reset empties the feature table and sizes it for n features at a load
// factor of at most one half.
func (s *scratch) reset(n int) {
	size := 64
	for size < 2*n {
		size <<= 1
	}
	if cap(s.slots) < size {
		s.slots = make([]slot, size)
	} else {
		s.slots = s.slots[:size]
		clear(s.slots)
	}
	s.mask = uint64(size - 1)
}

// add records one occurrence of the feature with the (finalised) hash h.
func (s *scratch) add(h uint64, w float64) {
	h = fmix64(h)
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		sl := &s.slots[i]
		if sl.n == 0 {
			*sl = slot{h: h, w: w, n: 1}
			return
		}
		if sl.h == h {
			sl.w += w
			sl.n++
			return
		}
	}
}

// FNV-1a 64 parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashByte(h uint64, b byte) uint64 {
	return (h ^ uint64(b)) * fnvPrime
}

func hashBytes(h uint64, p []byte) uint64 {
	for _, b := range p {
		h = (h ^ uint64(b)) * fnvPrime
	}
	return h
}

// fmix64 is murmur3's 64-bit finaliser. FNV-1a's low bits depend only on
// the low bits of the input bytes, and the bucket index uses the low bits,
// so the hash is mixed before use.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
