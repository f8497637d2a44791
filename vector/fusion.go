package vector

import (
	"cmp"
	"slices"
)

// FusionMethod is how a hybrid search combines its two rankings.
type FusionMethod string

// The fusion methods.
const (
	// FuseRRF is reciprocal rank fusion: a row at rank r (from 1) of a
	// signal scores weight/(K+r) from it. It uses ranks only, so a signal
	// whose scores are close together weighs as much as one whose best
	// row stands out.
	FuseRRF FusionMethod = "rrf"
	// FuseScores adds the signals' scores, each scaled to [0, 1] by its
	// known floor and its best candidate, times its weight: a similarity
	// from the search's threshold, a BM25 score from 0. A clear nearest
	// neighbour keeps its lead, and the weight of a word match follows
	// how close it comes to the best one, not where it stands among
	// the other matches.
	FuseScores FusionMethod = "scores"
)

// Fusion says how a hybrid search combines its signals. The zero value
// means DefaultFusion.
type Fusion struct {
	Method FusionMethod
	// VectorWeight and TextWeight scale each signal's contribution.
	VectorWeight, TextWeight float64
	// K is reciprocal rank fusion's k (FuseRRF only).
	K float64
}

// DefaultFusion is the fusion memory search uses, chosen on the
// evaluation set of vector/evalset (docs/memories.md): scaled scores
// (FuseScores), BM25 at 0.12 of the vector signal's weight. On that set
// reciprocal rank fusion, at any text weight from 1 down to 0.25, ranked
// worse than the vector signal alone (recall@5 0.19 to 0.38 against 0.47
// with use-lite): BM25's top ranks on paraphrased questions are mostly
// wrong, and rank fusion gives them as much weight as the best neighbour.
// Scaled scores let a clear nearest neighbour keep its lead, and a word
// match still lifts the right memory among close ones. With bge, the
// default embedder, this fusion ranks ahead of the vector signal alone at
// recall@1, @5 and @10 on the set (0.383 / 0.592 / 0.687 against 0.363 /
// 0.587 / 0.676); scaling each signal by its worst candidate instead of
// its floor, at 0.3, ranked below it (0.356 / 0.576 / 0.670).
var DefaultFusion = Fusion{Method: FuseScores, VectorWeight: 1, TextWeight: 0.12}

// Fuse combines the rankings of the vector and text signals with
// reciprocal rank fusion: a row at rank r (from 1) of a signal scores
// 1/(RRFK+r) from it. See Fusion.Fuse for the order of the hits.
func Fuse(vec, text []Scored) []Hit {
	return Fusion{Method: FuseRRF, VectorWeight: 1, TextWeight: 1, K: RRFK}.Fuse(vec, text, -1)
}

// Fuse combines two rankings, each best first, by f's method; minSimilarity
// is the vector signal's threshold, the floor FuseScores scales its
// similarities from (no candidate is below it). Each hit records the
// signals that found it and, from the vector signal, its similarity;
// Memory is left empty but for its id.
//
// Hits are ordered by fused score, and equal scores by a key that does not
// depend on ids, which are random: a higher similarity first (a hit the
// vector signal found before one it did not), then a higher text score,
// then the position in the text ranking (whose ties drivers order by text,
// Driver.MatchText), then the id. Two stores of the same memories, whose
// ids differ, thus rank alike unless two memories have the same embedding
// and neither matches the words, which in practice means the same text.
func (f Fusion) Fuse(vec, text []Scored, minSimilarity float64) []Hit {
	if f.Method == "" {
		f = DefaultFusion
	}
	byID := make(map[string]int, len(vec)+len(text))
	var hits []Hit
	// textScore and textRank are each hit's text score and its position
	// in the text ranking (len(text) when absent), for ties.
	textScore := make([]float64, 0, len(vec)+len(text))
	textRank := make([]int, 0, len(vec)+len(text))
	add := func(list []Scored, sig Signal, w, floor float64) {
		lo, hi := min(floor, lowest(list)), highest(list)
		for r, sc := range list {
			i, ok := byID[sc.ID]
			if !ok {
				i = len(hits)
				byID[sc.ID] = i
				hits = append(hits, Hit{Memory: Memory{ID: sc.ID}})
				textScore = append(textScore, 0)
				textRank = append(textRank, len(text))
			}
			h := &hits[i]
			switch f.Method {
			case FuseScores:
				if hi > lo {
					h.Score += w * (sc.Score - lo) / (hi - lo)
				} else {
					h.Score += w
				}
			default:
				h.Score += w / (f.K + float64(r+1))
			}
			h.Signals = append(h.Signals, sig)
			if sig == SignalVector {
				sim := sc.Score
				h.Similarity = &sim
			} else {
				textScore[i], textRank[i] = sc.Score, r
			}
		}
	}
	add(vec, SignalVector, f.VectorWeight, minSimilarity)
	add(text, SignalText, f.TextWeight, 0)
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := hits[i], hits[j]
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(similarityKey(b), similarityKey(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(textScore[j], textScore[i]); c != 0 {
			return c
		}
		if c := cmp.Compare(textRank[i], textRank[j]); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := make([]Hit, len(hits))
	for k, i := range order {
		out[k] = hits[i]
	}
	return out
}

// similarityKey orders hits without a similarity below any with one.
func similarityKey(h Hit) float64 {
	if h.Similarity == nil {
		return -2
	}
	return *h.Similarity
}

// lowest and highest return the lowest and highest score of a ranking
// (0 for an empty one).
func lowest(list []Scored) float64 {
	var lo float64
	for i, s := range list {
		if i == 0 || s.Score < lo {
			lo = s.Score
		}
	}
	return lo
}

func highest(list []Scored) float64 {
	var hi float64
	for i, s := range list {
		if i == 0 || s.Score > hi {
			hi = s.Score
		}
	}
	return hi
}
