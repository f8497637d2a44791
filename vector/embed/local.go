package embed

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// LocalDimension is the length of the local embedder's vectors. 384 matches
// common small sentence models, so a collection's storage layout does not
// change when a user moves to one of them.
const LocalDimension = 384

// localName identifies the local algorithm. Any change that alters a single
// output bit must bump the version, so that stored collections are rebuilt.
const localName = "local:hash-ngram-v1:384"

// ctxCheckEvery is how many texts the local embedder embeds between checks
// of ctx, so that a cancelled bulk re-embed stops quickly at negligible cost.
const ctxCheckEvery = 64

// NewLocal returns the default embedder: deterministic, offline, no model
// files. The same text gives a bit-identical vector on every machine and run.
//
// Text is lower-cased and split on every rune that is not a letter or digit
// (a combining mark continues a word); one-rune tokens are dropped unless
// they are digits. The features are word unigrams (weight 1), bigrams of
// adjacent words (0.5), and the character trigrams of each word padded as
// "<word>" (mass 1 per word, so "invoice" and "invoices" land close); all
// features of a common English function word are scaled by 0.2. Each
// feature's weights are summed and damped by sqrt(tf), as in Lucene's
// classic similarity; sqrt rather than 1+ln(tf) because math.Sqrt is
// correctly rounded everywhere while math.Log may differ in the last bit
// between architectures. Features are hashed with FNV-1a 64 and a murmur3
// finaliser into LocalDimension buckets, one hash bit choosing the sign, and
// the result is L2-normalised.
//
// It captures shared words and word forms, not meaning: synonyms and
// paraphrases with no shared words are not brought together.
func NewLocal() Embedder {
	return &local{pool: sync.Pool{New: func() any { return new(scratch) }}}
}

// local is the Embedder returned by NewLocal. Its scratch buffers are pooled
// so that embedding allocates little more than the result.
type local struct {
	pool sync.Pool
}

func (l *local) Dimension() int { return LocalDimension }

func (l *local) Name() string { return localName }

// Embed never fails except when ctx is done.
func (l *local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: local: %w", err)
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*LocalDimension)
	s := l.pool.Get().(*scratch)
	defer l.put(s)
	for i, text := range texts {
		if i > 0 && i%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: local: %w", err)
			}
		}
		v := backing[i*LocalDimension : (i+1)*LocalDimension : (i+1)*LocalDimension]
		s.embed(text, v)
		out[i] = v
	}
	return out, nil
}

// maxPooledSlots bounds the feature table kept for reuse, so that one huge
// document does not pin megabytes of scratch memory for the process life.
const maxPooledSlots = 1 << 16

func (l *local) put(s *scratch) {
	if cap(s.slots) > maxPooledSlots {
		return
	}
	l.pool.Put(s)
}

// embed writes the vector of text into dst, which must have length
// LocalDimension and be zeroed.
//
// No floating-point product feeds an addition without an explicit
// conversion: the Go spec lets compilers fuse x*y+z into one FMA on some
// architectures, which would break bit-identical output across machines.
func (s *scratch) embed(text string, dst []float32) {
	s.tokenise(text)
	if len(s.toks) == 0 {
		return
	}
	s.features()
	var acc [LocalDimension]float64
	for _, sl := range s.slots {
		if sl.n == 0 {
			continue
		}
		v := sl.w / math.Sqrt(float64(sl.n))
		b := sl.h % LocalDimension
		if sl.h>>63 == 1 {
			acc[b] -= v
		} else {
			acc[b] += v
		}
	}
	var ss float64
	for _, a := range acc {
		ss += float64(a * a)
	}
	if ss == 0 {
		return
	}
	norm := math.Sqrt(ss)
	for i, a := range acc {
		dst[i] = float32(a / norm)
	}
}
