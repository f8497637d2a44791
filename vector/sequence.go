package vector

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Sequence is how a search ranks the memories that occurred next to its
// best hit when the question asks what came after or before something
// ("What did Tom do after his holiday?", SequenceCue). Such a question's
// words and meaning find the event it names (the anchor), not the memory
// that answers it, which says something else and happened later. The
// search then reads the Neighbours memories that pass its filter, in the
// anchor's collection, that occurred just after the anchor (or just
// before it, for "before"), by OccurredAt, and adds to each a bonus of up
// to Weight times the best hit's score: the share Meaning of it by the
// neighbour's similarity to the query (scaled to [0, 1] among the
// neighbours), the rest by its nearness to the anchor (the nearest gets
// all, the last 1/Neighbours). A neighbour the signals found keeps its own
// score too, and one they did not is found by SignalSequence. It costs
// three reads (the anchor's row, the neighbours' listing through the
// (user, collection, occurred_at) index, their vectors), whatever the
// collection's size, and only for such questions ranked by relevance.
type Sequence struct {
	// Off leaves the ranking to the signals alone.
	Off bool
	// Neighbours is how many memories after (or before) the anchor are
	// ranked, at most MaxSequenceNeighbours; 0 means DefaultSequence's.
	Neighbours int
	// Weight scales the best hit's score a neighbour may get; 0 means
	// DefaultSequence's.
	Weight float64
	// Meaning is the share of the bonus the neighbour's similarity to
	// the query decides, in [0, 1]; 0 means nearness alone.
	Meaning float64
}

// DefaultSequence is the ranking a zero Sequence means, chosen on the
// evaluation set of vector/evalset (docs/memories.md): the 30 memories
// after the anchor, ranked by meaning, the best of them lifted by half the
// best hit's score. Nearness alone, 10 neighbours, or a full score's
// weight found fewer answers; 50 neighbours about as many.
var DefaultSequence = Sequence{Neighbours: 30, Weight: 0.5, Meaning: 1}

// MaxSequenceNeighbours bounds Sequence.Neighbours: the extra read of a
// question about what came next.
const MaxSequenceNeighbours = 100

// SequenceCue reports whether the question asks what came after something
// (1), before something (-1), or neither (0): the first of the words
// "after", "following", "afterwards", "since" or "before", "prior",
// "preceding" among its words decides (Terms drops these as stop words).
func SequenceCue(text string) int {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, t := range words {
		switch t {
		case "after", "afterwards", "following", "since":
			return 1
		case "before", "prior", "preceding":
			return -1
		}
	}
	return 0
}

// sequence returns fused with the anchor's neighbours ranked in, when q
// asks what came after or before something (see Sequence); f is the
// search's filter, whose collections have q's space.
func (s *Store) sequence(ctx context.Context, q Query, f Filter, fused []Hit) ([]Hit, error) {
	seq := q.Sequence
	if seq == (Sequence{}) {
		seq = DefaultSequence
	}
	if seq.Off || len(fused) == 0 || q.Only != "" || q.Sort != SortRelevance {
		return fused, nil
	}
	dir := SequenceCue(q.Text)
	if dir == 0 {
		return fused, nil
	}
	if seq.Neighbours <= 0 {
		seq.Neighbours = DefaultSequence.Neighbours
	}
	seq.Neighbours = min(seq.Neighbours, MaxSequenceNeighbours)
	if seq.Weight <= 0 {
		seq.Weight = DefaultSequence.Weight
	}
	seq.Meaning = min(max(seq.Meaning, 0), 1)
	top := fused[0]
	ms, err := s.d.Get(ctx, q.UserID, []string{top.ID})
	if err != nil || len(ms) == 0 {
		return fused, err
	}
	at := ms[0].OccurredAt
	// The neighbours pass the search's filter, in the anchor's
	// collection, strictly after (or before) it.
	nf := f
	nf.Collections = []string{ms[0].Collection}
	lq := ListQuery{Filter: nf, Sort: SortOccurredAt, Limit: seq.Neighbours, NoTotal: true}
	if dir > 0 {
		lq.OccurredFrom, lq.Ascending = later(at, f.OccurredFrom), true
	} else {
		lq.OccurredTo = earlier(at, f.OccurredTo)
	}
	if !f.OccurredTo.IsZero() && !lq.OccurredFrom.IsZero() && lq.OccurredFrom.After(f.OccurredTo) ||
		!f.OccurredFrom.IsZero() && !lq.OccurredTo.IsZero() && lq.OccurredTo.Before(f.OccurredFrom) {
		return fused, nil
	}
	near, _, err := s.d.List(ctx, lq)
	if err != nil {
		return nil, err
	}
	if len(near) == 0 {
		return fused, nil
	}
	byID := make(map[string]int, len(fused))
	for i, h := range fused {
		byID[h.ID] = i
	}
	meaning := make([]float64, len(near))
	if seq.Meaning > 0 {
		ids := make([]string, len(near))
		for i, m := range near {
			ids[i] = m.ID
		}
		vecs, err := s.d.Embeddings(ctx, q.UserID, ids)
		if err != nil {
			return nil, err
		}
		lo, hi := 2.0, -2.0
		for i, m := range near {
			meaning[i] = cosine(q.Vector, vecs[m.ID])
			lo, hi = min(lo, meaning[i]), max(hi, meaning[i])
		}
		for i := range meaning {
			if hi > lo {
				meaning[i] = (meaning[i] - lo) / (hi - lo)
			} else {
				meaning[i] = 1
			}
		}
	}
	out := slices.Clone(fused)
	for i, m := range near {
		nearness := float64(seq.Neighbours-i) / float64(seq.Neighbours)
		bonus := seq.Weight * top.Score * ((1-seq.Meaning)*nearness + seq.Meaning*meaning[i])
		if j, ok := byID[m.ID]; ok {
			out[j].Score += bonus
			continue
		}
		out = append(out, Hit{Memory: Memory{ID: m.ID}, Score: bonus, Signals: []Signal{SignalSequence}})
	}
	// Stable: equal scores keep the signals' order (Fusion.Fuse), and
	// neighbours the signals did not find follow it in the order they
	// occurred.
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out, nil
}

// later is the first instant after t a neighbour may have, within from.
func later(t, from time.Time) time.Time {
	n := t.Add(time.Microsecond)
	if n.Before(from) {
		return from
	}
	return n
}

// earlier is the last instant before t a neighbour may have, within to.
func earlier(t, to time.Time) time.Time {
	n := t.Add(-time.Microsecond)
	if !to.IsZero() && n.After(to) {
		return to
	}
	return n
}

// cosine is the cosine similarity of a and b; 0 when either is zero or
// their lengths differ.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
