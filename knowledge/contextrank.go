package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Weights of the composite entity score. Each signal is normalised to 0..1:
//
//   - recency: exp(-age/30 days), age since the entity's last observation;
//   - observations: log(1+n) / log(1+max n) over the ranked entities;
//   - degree: log(1+d) / log(1+max d), d counting the live relationships
//     whose other end the caller may read;
//   - topic: the cosine similarity (negatives as 0) between the embedded
//     topic and the entity's text (type, name and scalar fields; see
//     entityembed.go), read from the stored entity embeddings when they
//     are current, embedded on the fly otherwise.
//
// Without a topic the score is base = 0.5·recency + 0.3·observations +
// 0.2·degree; with one it is 0.7·topic + 0.3·base, so that an entity about
// the topic outranks a merely recent or busy one. Ties go to the more
// recently observed entity, then the smaller id.
const (
	recencyScale = 30 * 24 * time.Hour

	wRecency, wObs, wDegree = 0.5, 0.3, 0.2
	wTopic                  = 0.7
)

// maxEntityText bounds the text an entity is embedded as for topic
// similarity.
const maxEntityText = 300

// rankedEntity is an entity with its composite score.
type rankedEntity struct {
	entity graph.Entity
	score  float64
}

// rankEntities scores the candidates and returns the best
// ContextTopEntities, best first.
func (s *Service) rankEntities(ctx context.Context, cands []graph.Entity, degree map[string]int, topic string) ([]rankedEntity, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	now := s.clock()
	maxObs, maxDeg := 0, 0
	for _, e := range cands {
		maxObs, maxDeg = max(maxObs, e.ObservationCount), max(maxDeg, degree[e.ID])
	}
	norm := func(v, top int) float64 {
		if top == 0 {
			return 0
		}
		return math.Log1p(float64(v)) / math.Log1p(float64(top))
	}
	type signals struct{ recency, obs, deg, topic float64 }
	sig := make([]signals, len(cands))
	for i, e := range cands {
		age := max(now.Sub(e.LastObservationAt), 0)
		sig[i] = signals{
			recency: math.Exp(-float64(age) / float64(recencyScale)),
			obs:     norm(e.ObservationCount, maxObs),
			deg:     norm(degree[e.ID], maxDeg),
		}
	}
	base := func(i int) float64 { return wRecency*sig[i].recency + wObs*sig[i].obs + wDegree*sig[i].deg }
	if topic != "" {
		idx := topicCandidates(cands, topic, base)
		vecs, err := s.topicVectors(ctx, topic, cands, idx)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			sig[i].topic = max(cosine(vecs[0], vecs[k+1]), 0)
		}
	}
	out := make([]rankedEntity, len(cands))
	for i, e := range cands {
		score := base(i)
		if topic != "" {
			score = wTopic*sig[i].topic + (1-wTopic)*score
		}
		out[i] = rankedEntity{entity: e, score: roundScore(score)}
	}
	slices.SortFunc(out, func(a, b rankedEntity) int {
		return cmp.Or(cmp.Compare(b.score, a.score), b.entity.LastObservationAt.Compare(a.entity.LastObservationAt),
			strings.Compare(a.entity.ID, b.entity.ID))
	})
	return out[:min(len(out), ContextTopEntities)], nil
}

// topicVectors returns the topic's embedding followed by one vector per
// candidate of idx. A candidate's vector is its stored entity embedding
// when there is one of the configured embedder made from the entity's
// current text; the others, and the topic, are embedded in one call.
func (s *Service) topicVectors(ctx context.Context, topic string, cands []graph.Entity, idx []int) ([][]float32, error) {
	out := make([][]float32, len(idx)+1)
	texts := make([]string, len(idx))
	for k, i := range idx {
		texts[k] = entityText(cands[i])
	}
	if s.entityVecs != nil && len(idx) > 0 {
		ids := make([]string, len(idx))
		for k, i := range idx {
			ids[k] = cands[i].ID
		}
		stored, err := s.entityVecs.Get(ctx, cands[idx[0]].UserID, ids)
		if err != nil {
			// The vectors are a cache of what can be computed here.
			s.log.Warn("context: read entity embeddings", "err", err)
		}
		byID := make(map[string]vector.EntityEmbedding, len(stored))
		for _, e := range stored {
			byID[e.EntityID] = e
		}
		name, dim := s.embedder.Name(), s.embedder.Dimension()
		for k, i := range idx {
			e, ok := byID[cands[i].ID]
			if ok && e.Space.Embedder == name && (dim == 0 || e.Space.Dimension == dim) && e.TextHash == entityTextHash(texts[k]) {
				out[k+1] = e.Embedding
			}
		}
	}
	missing := []string{topic}
	var at []int
	for k := range idx {
		if out[k+1] == nil {
			missing = append(missing, texts[k])
			at = append(at, k+1)
		}
	}
	vecs, err := s.embedder.Embed(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("embed topic: %w", err)
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("embed topic: %d vectors for %d texts", len(vecs), len(missing))
	}
	out[0] = vecs[0]
	for j, k := range at {
		out[k] = vecs[j+1]
	}
	return out, nil
}

// topicCandidates picks the entities to embed for topic similarity: the
// MaxTopicCandidates best by the other signals, and up to as many more
// whose text contains a word of the topic, so that an old, rarely seen
// entity that names the topic is still found.
func topicCandidates(cands []graph.Entity, topic string, base func(int) float64) []int {
	all := make([]int, len(cands))
	for i := range all {
		all[i] = i
	}
	if len(cands) <= MaxTopicCandidates {
		return all
	}
	slices.SortFunc(all, func(a, b int) int { return cmp.Or(cmp.Compare(base(b), base(a)), cmp.Compare(a, b)) })
	chosen := map[int]bool{}
	out := slices.Clone(all[:MaxTopicCandidates])
	for _, i := range out {
		chosen[i] = true
	}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	extra := 0
	for i, e := range cands {
		if extra >= MaxTopicCandidates || len(words) == 0 {
			break
		}
		if chosen[i] {
			continue
		}
		text := strings.ToLower(entityText(e))
		for _, w := range words {
			if strings.Contains(text, w) {
				out = append(out, i)
				extra++
				break
			}
		}
	}
	return out
}

// entityText is what an entity is compared with a topic as: its type, name
// and scalar snapshot values, cut to maxEntityText bytes.
func entityText(e graph.Entity) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(e.Type, "_", " "))
	b.WriteString(": ")
	b.WriteString(e.CanonicalName)
	for _, k := range sortedKeys(e.Snapshot) {
		if b.Len() >= maxEntityText {
			break
		}
		switch v := e.Snapshot[k].(type) {
		case string:
			b.WriteString("; ")
			b.WriteString(v)
		case []any, map[string]any, nil, bool:
		default:
			b.WriteString("; ")
			b.WriteString(scalarText(v))
		}
	}
	text := b.String()
	if len(text) > maxEntityText {
		text = strings.ToValidUTF8(text[:maxEntityText], "")
	}
	return text
}
