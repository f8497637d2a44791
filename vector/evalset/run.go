package evalset

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/cairnkg/cairn/vector"
)

// Embedder is what the harness needs of an embedder (embed.Embedder has
// it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimension() int
	Name() string
}

// Mode is a way of searching the memories.
type Mode struct {
	Name string
	// Only restricts the search to one signal; empty is hybrid.
	Only vector.Signal
	// MinSimilarity is the vector threshold; nil means the options'.
	MinSimilarity *float64
	Fusion        vector.Fusion
	// Sequence is the ranking of what came after or before an event
	// (vector.Sequence); the zero value is search_memory's.
	Sequence vector.Sequence
}

// Options configure a run.
type Options struct {
	// UserID owns the memories; "" means "eval".
	UserID string
	// MinSimilarity is the default vector threshold of the modes (the
	// embedder's, as serve would use).
	MinSimilarity float64
	// Modes to measure; nil means BM25 alone, vector alone and hybrid.
	Modes []Mode
	// Batch is how many turns are embedded and saved at once; 0 means 64.
	Batch int
	// Padding is how many more memories of small talk each conversation
	// gets beside its turns (deterministic, see pad), so that latency and
	// recall can be measured at a larger size: 1,800 brings the five
	// conversations to about 10,000 memories.
	Padding int
	// Shared saves every conversation into one collection, so that a
	// question is asked of all of them (the size search latency is
	// measured at), not of its own conversation's.
	Shared bool
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// Recall is the figures of a group of questions.
type Recall struct {
	Questions int     `json:"questions"`
	R1        float64 `json:"recall_at_1"`
	R5        float64 `json:"recall_at_5"`
	R10       float64 `json:"recall_at_10"`
	Hit5      float64 `json:"hit_at_5"`
}

// ModeReport is one mode's figures.
type ModeReport struct {
	Mode   string          `json:"mode"`
	All    Recall          `json:"all"`
	ByKind map[Kind]Recall `json:"by_kind"`
	// SearchP50ms and SearchP95ms time a search as search_memory runs
	// it: embedding the question, then the store's search (top 10).
	SearchP50ms float64 `json:"search_p50_ms"`
	SearchP95ms float64 `json:"search_p95_ms"`
}

// Report is a run's figures.
type Report struct {
	Embedder      string  `json:"embedder"`
	MinSimilarity float64 `json:"min_similarity"`
	Turns         int     `json:"turns"`
	// Memories is the turns and the padding saved.
	Memories  int `json:"memories"`
	Questions int `json:"questions"`
	// IngestPerSec is turns embedded and saved per second, in batches.
	IngestPerSec float64      `json:"ingest_per_s"`
	Modes        []ModeReport `json:"modes"`
	// Threshold counts the answers the vector signal ranks in its top 10
	// without a threshold whose similarity is below MinSimilarity: the
	// relevant hits the default threshold drops.
	Threshold ThresholdReport `json:"threshold"`
}

// ThresholdReport says what the threshold costs.
type ThresholdReport struct {
	AnswersInTop10 int `json:"answers_in_top10"`
	Dropped        int `json:"dropped"`
	// Similarities of the answers found, at quantiles 5, 25, 50, and of
	// the best wrong hit at 50 and 95.
	AnswerP5, AnswerP25, AnswerP50 float64
	WrongP50, WrongP95             float64
}

// DefaultModes are BM25 alone, the vector signal alone, their fusion as
// search_memory ranks (vector.DefaultFusion and vector.DefaultSequence),
// the same fusion without the sequence ranking, and for comparison their
// reciprocal rank fusion (k 60, equal weights: the fusion before issue
// 36), all with the threshold of the options.
func DefaultModes() []Mode {
	return []Mode{{Name: "bm25", Only: vector.SignalText}, {Name: "vector", Only: vector.SignalVector}, {Name: "hybrid"},
		{Name: "hybrid-seq0", Sequence: vector.Sequence{Off: true}},
		{Name: "rrf", Fusion: vector.Fusion{Method: vector.FuseRRF, VectorWeight: 1, TextWeight: 1, K: vector.RRFK}, Sequence: vector.Sequence{Off: true}}}
}

// Run saves every turn of s into store (one collection per conversation,
// for opts.UserID, which must hold none of them) and asks every question.
func Run(ctx context.Context, store *vector.Store, emb Embedder, s Set, opts Options) (Report, error) {
	if opts.UserID == "" {
		opts.UserID = "eval"
	}
	if opts.Batch <= 0 {
		opts.Batch = 64
	}
	if opts.Modes == nil {
		opts.Modes = DefaultModes()
	}
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "evalset: "+format+"\n", args...)
		}
	}
	rep := Report{Embedder: emb.Name(), MinSimilarity: opts.MinSimilarity}
	space := func() vector.Space { return vector.Space{Embedder: emb.Name(), Dimension: emb.Dimension()} }
	byTurn := map[string]string{} // turn id → memory id
	progress("saving %d conversations", len(s.Conversations))
	start := time.Now()
	collection := func(c Conversation) string {
		if opts.Shared {
			return "conversations"
		}
		return c.ID
	}
	// saveAll embeds and saves ms (Text set) in batches and returns their
	// ids, in order.
	saveAll := func(ms []vector.Memory) ([]string, error) {
		var ids []string
		for lo := 0; lo < len(ms); lo += opts.Batch {
			batch := ms[lo:min(lo+opts.Batch, len(ms))]
			texts := make([]string, len(batch))
			for i, m := range batch {
				texts[i] = m.Text
			}
			vecs, err := emb.Embed(ctx, texts)
			if err != nil {
				return nil, fmt.Errorf("evalset: embed: %w", err)
			}
			for i := range batch {
				batch[i].Embedding = vecs[i]
			}
			saved, err := store.Save(ctx, space(), batch...)
			if err != nil {
				return nil, fmt.Errorf("evalset: save: %w", err)
			}
			for _, m := range saved {
				ids = append(ids, m.ID)
			}
		}
		return ids, nil
	}
	for _, c := range s.Conversations {
		var ms []vector.Memory
		for _, t := range c.Turns {
			ms = append(ms, vector.Memory{UserID: opts.UserID, Collection: collection(c), Text: t.Memory(), OccurredAt: t.At,
				Metadata: map[string]any{"turn": t.ID}})
		}
		padding := pad(c, opts.Padding)
		for _, text := range padding {
			ms = append(ms, vector.Memory{UserID: opts.UserID, Collection: collection(c), Text: text, OccurredAt: c.Turns[0].At})
		}
		ids, err := saveAll(ms)
		if err != nil {
			return Report{}, err
		}
		for i, t := range c.Turns {
			byTurn[t.ID] = ids[i]
		}
		rep.Turns += len(c.Turns)
		rep.Memories += len(c.Turns) + len(padding)
	}
	rep.IngestPerSec = float64(rep.Memories) / time.Since(start).Seconds()

	type asked struct {
		q    Question
		coll string
		vec  []float32
	}
	var qs []asked
	for _, c := range s.Conversations {
		for _, q := range c.Questions {
			qs = append(qs, asked{q: q, coll: collection(c)})
		}
	}
	rep.Questions = len(qs)
	noThreshold := -1.0
	for _, m := range opts.Modes {
		progress("asking %d questions: %s", len(qs), m.Name)
		minSim := opts.MinSimilarity
		if m.MinSimilarity != nil {
			minSim = *m.MinSimilarity
		}
		mr := ModeReport{Mode: m.Name, ByKind: map[Kind]Recall{}}
		var lat []time.Duration
		sums := map[Kind]*Recall{}
		all := &Recall{}
		for _, a := range qs {
			t0 := time.Now()
			// The question is embedded by the store beside the text
			// signal, as search_memory has it (vector.Query.Embed).
			text := a.q.Text
			res, err := store.Search(ctx, vector.Query{
				Filter: vector.Filter{UserID: opts.UserID, Collections: []string{a.coll}},
				Text:   text, Space: space(), MinSimilarity: &minSim,
				Embed: func(ctx context.Context) ([]float32, error) {
					vecs, err := emb.Embed(ctx, []string{text})
					if err != nil {
						return nil, fmt.Errorf("evalset: embed: %w", err)
					}
					return vecs[0], nil
				},
				Fusion: m.Fusion, Only: m.Only, Sequence: m.Sequence, Limit: 10,
			})
			if err != nil {
				return Report{}, fmt.Errorf("evalset: search: %w", err)
			}
			lat = append(lat, time.Since(t0))
			got := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				got[i] = h.ID
			}
			r := score(got, a.q.Answers, byTurn)
			if sums[a.q.Kind] == nil {
				sums[a.q.Kind] = &Recall{}
			}
			for _, acc := range []*Recall{sums[a.q.Kind], all} {
				acc.Questions++
				acc.R1 += r.R1
				acc.R5 += r.R5
				acc.R10 += r.R10
				acc.Hit5 += r.Hit5
			}
		}
		for k, acc := range sums {
			mr.ByKind[k] = mean(*acc)
		}
		mr.All = mean(*all)
		mr.SearchP50ms, mr.SearchP95ms = percentile(lat, 50), percentile(lat, 95)
		rep.Modes = append(rep.Modes, mr)
	}

	// What the threshold drops: the vector signal's top 10 without one.
	progress("measuring the threshold")
	var answerSims, wrongSims []float64
	for _, a := range qs {
		vecs, err := emb.Embed(ctx, []string{a.q.Text})
		if err != nil {
			return Report{}, fmt.Errorf("evalset: embed: %w", err)
		}
		res, err := store.Search(ctx, vector.Query{
			Filter: vector.Filter{UserID: opts.UserID, Collections: []string{a.coll}},
			Text:   a.q.Text, Vector: vecs[0], Space: space(), MinSimilarity: &noThreshold, Only: vector.SignalVector, Limit: 10,
		})
		if err != nil {
			return Report{}, fmt.Errorf("evalset: search: %w", err)
		}
		wrongSeen := false
		for _, h := range res.Hits {
			if h.Similarity == nil {
				continue
			}
			if isAnswer(h.ID, a.q.Answers, byTurn) {
				rep.Threshold.AnswersInTop10++
				answerSims = append(answerSims, *h.Similarity)
				if *h.Similarity < opts.MinSimilarity {
					rep.Threshold.Dropped++
				}
			} else if !wrongSeen {
				wrongSeen = true
				wrongSims = append(wrongSims, *h.Similarity)
			}
		}
	}
	sort.Float64s(answerSims)
	sort.Float64s(wrongSims)
	rep.Threshold.AnswerP5, rep.Threshold.AnswerP25, rep.Threshold.AnswerP50 = quantile(answerSims, 5), quantile(answerSims, 25), quantile(answerSims, 50)
	rep.Threshold.WrongP50, rep.Threshold.WrongP95 = quantile(wrongSims, 50), quantile(wrongSims, 95)
	return rep, nil
}

// score is one question's figures for the hits got (memory ids, best
// first).
func score(got, answers []string, byTurn map[string]string) Recall {
	var r Recall
	for _, k := range []int{1, 5, 10} {
		found := 0
		for _, a := range answers {
			if slices.Contains(got[:min(k, len(got))], byTurn[a]) {
				found++
			}
		}
		rec := float64(found) / float64(len(answers))
		switch k {
		case 1:
			r.R1 = rec
		case 5:
			r.R5 = rec
			if found > 0 {
				r.Hit5 = 1
			}
		case 10:
			r.R10 = rec
		}
	}
	return r
}

func isAnswer(memID string, answers []string, byTurn map[string]string) bool {
	for _, a := range answers {
		if byTurn[a] == memID {
			return true
		}
	}
	return false
}

func mean(r Recall) Recall {
	if r.Questions == 0 {
		return r
	}
	n := float64(r.Questions)
	return Recall{Questions: r.Questions, R1: r.R1 / n, R5: r.R5 / n, R10: r.R10 / n, Hit5: r.Hit5 / n}
}

func percentile(lat []time.Duration, q int) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*q/100)].Microseconds()) / 1000
}

func quantile(sorted []float64, q int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*q/100)]
}

// Print writes the report as tables.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "embedder %s, minSimilarity %.2f: %d turns (%d memories with padding), %d questions; ingest %.0f memories/s\n\n",
		r.Embedder, r.MinSimilarity, r.Turns, r.Memories, r.Questions, r.IngestPerSec)
	fmt.Fprintf(w, "%-14s %-12s %5s %6s %6s %6s %6s\n", "mode", "kind", "n", "R@1", "R@5", "R@10", "hit@5")
	for _, m := range r.Modes {
		row := func(kind string, x Recall) {
			fmt.Fprintf(w, "%-14s %-12s %5d %6.3f %6.3f %6.3f %6.3f\n", m.Mode, kind, x.Questions, x.R1, x.R5, x.R10, x.Hit5)
		}
		for _, k := range Kinds {
			if x, ok := m.ByKind[k]; ok {
				row(string(k), x)
			}
		}
		row("all", m.All)
	}
	fmt.Fprintf(w, "\n%-14s %10s %10s\n", "mode", "search p50", "search p95")
	for _, m := range r.Modes {
		fmt.Fprintf(w, "%-14s %8.2fms %8.2fms\n", m.Mode, m.SearchP50ms, m.SearchP95ms)
	}
	t := r.Threshold
	fmt.Fprintf(w, "\nthreshold %.2f: drops %d of the %d answers in the vector top 10 without one; answer similarity p5 %.2f p25 %.2f p50 %.2f, best wrong p50 %.2f p95 %.2f\n",
		r.MinSimilarity, t.Dropped, t.AnswersInTop10, t.AnswerP5, t.AnswerP25, t.AnswerP50, t.WrongP50, t.WrongP95)
}

// pad returns n lines of small talk for c, each two or three of the
// chatter and reaction lines said by one of its speakers: distractors that
// answer no question, deterministic for c and n.
func pad(c Conversation, n int) []string {
	rng := rand.New(rand.NewPCG(uint64(len(c.Turns)), uint64(n)))
	out := make([]string, n)
	for i := range out {
		speaker := c.Speaker
		if rng.IntN(2) == 1 {
			speaker = c.Friend
		}
		text := chatter[rng.IntN(len(chatter))] + " " + reactions[rng.IntN(len(reactions))]
		if rng.IntN(2) == 1 {
			text += " " + chatter[rng.IntN(len(chatter))]
		}
		out[i] = speaker + ": " + text
	}
	return out
}
