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

// rankedEntity is an entity with its composite score.
type rankedEntity struct {
	entity graph.Entity
	score  float64
	// raw are the fields its sources gave that its schema does not name
	// (yet), shown as facts marked raw (ContextEntity.RawFields).
	raw map[string]any
}

// ranking scores candidates from their statistics (graph.EntityStat) and
// reads the snapshots of only those it must: the candidates of topic
// similarity, whose text is embedded, and the entities it returns. Reading
// and decoding every snapshot is what ranking would otherwise cost.
type ranking struct {
	userID string
	now    time.Time
	stats  []graph.EntityStat
	base   []float64            // the score without a topic, by candidate
	topic  []float64            // topic similarity by candidate; nil without a topic
	ents   map[int]graph.Entity // candidates whose snapshot was read
	texts  map[int]string       // graph.EntityText of candidates, once computed
	hashes map[int]string       // entityTextHash of those texts, once computed
	limits contextLimits
	// textCache holds texts of earlier loads by their hash; nil holds none.
	textCache *entityTextCache
}

// newRanking computes the signals of the candidates other than the topic;
// degree[i] is candidate i's degree (see degrees).
func newRanking(userID string, now time.Time, stats []graph.EntityStat, degree []int, limits contextLimits) *ranking {
	r := &ranking{userID: userID, now: now, stats: stats, base: make([]float64, len(stats)), limits: limits,
		ents: map[int]graph.Entity{}, texts: map[int]string{}, hashes: map[int]string{}}
	maxObs, maxDeg := 0, 0
	for i, e := range stats {
		maxObs, maxDeg = max(maxObs, e.ObservationCount), max(maxDeg, degree[i])
	}
	norm := func(v, top int) float64 {
		if top == 0 {
			return 0
		}
		return math.Log1p(float64(v)) / math.Log1p(float64(top))
	}
	for i, e := range stats {
		age := max(now.Sub(e.LastObservationAt), 0)
		recency := math.Exp(-float64(age) / float64(recencyScale))
		r.base[i] = wRecency*recency + wObs*norm(e.ObservationCount, maxObs) + wDegree*norm(degree[i], maxDeg)
	}
	return r
}

// score is candidate i's composite score.
func (r *ranking) score(i int) float64 {
	if r.topic == nil {
		return roundScore(r.base[i])
	}
	return roundScore(wTopic*r.topic[i] + (1-wTopic)*r.base[i])
}

// best returns the indexes of the best ContextTopEntities candidates, best
// first. The order (score, then the more recent observation, then the
// smaller id) is total, since ids are unique, so keeping the best few in
// one pass gives exactly the first few of a full sort, in a fraction of
// its time.
func (r *ranking) best() []int {
	type scored struct {
		i     int
		score float64
	}
	before := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		ea, eb := r.stats[a.i], r.stats[b.i]
		if c := ea.LastObservationAt.Compare(eb.LastObservationAt); c != 0 {
			return c > 0
		}
		return ea.ID < eb.ID
	}
	top := make([]scored, 0, ContextTopEntities+1)
	for i := range r.stats {
		x := scored{i, r.score(i)}
		if len(top) == ContextTopEntities && !before(x, top[len(top)-1]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, x, func(e, x scored) int {
			if before(e, x) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, at, x)
		if len(top) > ContextTopEntities {
			top = top[:ContextTopEntities]
		}
	}
	out := make([]int, len(top))
	for k, x := range top {
		out[k] = x.i
	}
	return out
}

// text returns candidate i's graph.EntityText; its snapshot must have
// been read, or its text found in the text cache (cachedTexts). A text
// computed here is cached under the hash its signature holds.
func (r *ranking) text(i int) string {
	t, ok := r.texts[i]
	if !ok {
		t = graph.EntityText(r.ents[i])
		r.texts[i] = t
		if h, ok := r.stats[i].TextSig.TextHash(); ok {
			r.textCache.put(r.userID, h, t)
		}
	}
	return t
}

// cachedTexts takes from the text cache the texts of those of the
// candidates idx whose signature holds their text hash, and returns the
// others. A text found so is the current one, being addressed by its hash.
func (r *ranking) cachedTexts(idx []int) []int {
	if r.textCache == nil {
		return idx
	}
	rest := idx[:0:0]
	for _, i := range idx {
		if _, ok := r.texts[i]; ok {
			continue
		}
		if h, ok := r.stats[i].TextSig.TextHash(); ok {
			if t, ok := r.textCache.get(r.userID, h); ok {
				r.texts[i] = t
				continue
			}
		}
		rest = append(rest, i)
	}
	return rest
}

// untexted returns those of idx whose text is not known: neither read nor
// found in the text cache.
func (r *ranking) untexted(idx []int) []int {
	var out []int
	for _, i := range idx {
		if _, ok := r.texts[i]; ok {
			continue
		}
		if _, ok := r.ents[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// textHash returns the entityTextHash of candidate i's text: the one its
// text signature holds (graph.TextSig.TextHash), or else that of the text
// of its snapshot, which must then have been read.
func (r *ranking) textHash(i int) string {
	h, ok := r.hashes[i]
	if !ok {
		if h, ok = r.stats[i].TextSig.TextHash(); !ok {
			h = entityTextHash(r.text(i))
		}
		r.hashes[i] = h
	}
	return h
}

// unhashed returns those of the candidates idx whose text hash their
// signature does not hold: their snapshots must be read for it.
func (r *ranking) unhashed(idx []int) []int {
	var out []int
	for _, i := range idx {
		if _, ok := r.stats[i].TextSig.TextHash(); !ok {
			out = append(out, i)
		}
	}
	return out
}

// read reads the snapshots of the candidates idx that were not read yet.
func (r *ranking) read(ctx context.Context, tx *graph.Tx, idx []int) error {
	n, err := r.readFound(ctx, tx, idx)
	if err == nil && n > 0 {
		err = fmt.Errorf("read ranked entities: %d not found", n)
	}
	return err
}

// readFound is read for candidates that may have gone since their
// statistics were read (in another transaction): it returns how many of
// them it did not find, rather than an error.
func (r *ranking) readFound(ctx context.Context, tx *graph.Tx, idx []int) (int, error) {
	var ids []string
	at := map[string]int{}
	for _, i := range idx {
		if _, ok := r.ents[i]; !ok {
			ids = append(ids, r.stats[i].ID)
			at[r.stats[i].ID] = i
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ents, err := tx.Entities(ctx, r.userID, ids)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		r.ents[at[e.ID]] = e
	}
	return len(ids) - len(ents), nil
}

// missing returns those of idx whose snapshot was not read.
func (r *ranking) missing(idx []int) []int {
	var out []int
	for _, i := range idx {
		if _, ok := r.ents[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// ranked returns the candidates idx, whose snapshots were read, with their
// scores.
func (r *ranking) ranked(idx []int) []rankedEntity {
	if len(idx) == 0 {
		return nil
	}
	out := make([]rankedEntity, len(idx))
	for k, i := range idx {
		out[k] = rankedEntity{entity: r.ents[i], score: r.score(i)}
	}
	return out
}

// setTopic computes the topic similarity of the candidates idx; the others
// have none. topicVec is the topic's embedding, being computed; vecs holds
// the candidates' vectors that knownVectors found, packed as the entity
// store and the cache keep them (vector.PackInt8), nil for the others,
// whose snapshots were read and which are embedded here.
func (s *Service) setTopic(ctx context.Context, r *ranking, topicVec *pending[[]float32], idx []int, vecs [][]byte) error {
	if err := s.embedCandidates(ctx, r, idx, vecs); err != nil {
		return err
	}
	topic, err := topicVec.wait(ctx)
	if err != nil {
		return fmt.Errorf("embed topic: %w", err)
	}
	r.topic = make([]float64, len(r.stats))
	norm := sumSquares(topic)
	for k, i := range idx {
		r.topic[i] = max(cosinePacked(topic, norm, vecs[k]), 0)
	}
	return nil
}

// embedTopic embeds a context topic.
func (s *Service) embedTopic(ctx context.Context, topic string) ([]float32, error) {
	vecs, err := s.embedder.Embed(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("%d vectors for 1 text", len(vecs))
	}
	return vecs[0], nil
}

// fetchStored starts reading the stored embeddings of the candidates idx
// but for those the cache holds a vector of their current text for; nil
// when there is nothing to read. The text hashes of those whose signature
// holds none are those of their snapshots, which must have been read.
func (s *Service) fetchStored(ctx context.Context, r *ranking, idx []int) *pending[[]vector.EntityEmbedding] {
	ids := s.uncachedIDs(r, idx)
	if s.entityVecs == nil || len(ids) == 0 {
		return nil
	}
	return goPending(func() ([]vector.EntityEmbedding, error) { return s.entityVecs.Get(ctx, r.userID, ids) })
}

// cachedVector returns the cached vector of candidate i's current text in
// the embedder's space, or nil.
func (s *Service) cachedVector(r *ranking, i int) []byte {
	return s.vecCache.get(r.userID, s.embedder.Name(), s.embedder.Dimension(), r.textHash(i))
}

// uncachedIDs returns the ids of those candidates of idx whose vector the
// cache does not hold.
func (s *Service) uncachedIDs(r *ranking, idx []int) []string {
	ids := make([]string, 0, len(idx))
	for _, i := range idx {
		if !s.vecCache.has(r.userID, s.embedder.Name(), s.embedder.Dimension(), r.textHash(i)) {
			ids = append(ids, r.stats[i].ID)
		}
	}
	return ids
}

// knownVectors returns, for each candidate of idx, packed, the cache's vector of
// its current text (entityVectorCache) or its stored entity embedding when
// there is one of the configured embedder made from that text, and nil
// when there is neither. stored holds the stored embeddings of the first
// MaxTopicCandidates of idx that the cache did not hold; those of the rest
// are read here. What was read is cached for the next load. Candidates
// are known by their text hashes (ranking.textHash), so that those whose
// signature holds theirs need no snapshot read.
func (s *Service) knownVectors(ctx context.Context, r *ranking, idx []int, stored *pending[[]vector.EntityEmbedding]) [][]byte {
	out := make([][]byte, len(idx))
	for k, i := range idx {
		out[k] = s.cachedVector(r, i)
	}
	if s.entityVecs == nil || len(idx) == 0 {
		if stored != nil {
			stored.wait(context.Background())
		}
		return out
	}
	var got []vector.EntityEmbedding
	var err error
	if rest := idx[min(len(idx), r.limits.topicCandidates):]; len(rest) > 0 {
		if ids := s.uncachedIDs(r, rest); len(ids) > 0 {
			got, err = s.entityVecs.Get(ctx, r.userID, ids)
		}
	}
	if stored != nil {
		first, ferr := stored.wait(context.Background()) // Get ends with ctx
		got, err = append(got, first...), cmp.Or(ferr, err)
	}
	if err != nil {
		// The vectors are a cache of what can be computed here.
		s.log.Warn("context: read entity embeddings", "err", err)
	}
	byID := make(map[string]vector.EntityEmbedding, len(got))
	for _, e := range got {
		byID[e.EntityID] = e
	}
	for k, i := range idx {
		if out[k] != nil {
			continue
		}
		e, ok := byID[r.stats[i].ID]
		if ok && s.inEmbedderSpace(e.Space) && e.TextHash == r.textHash(i) {
			out[k] = s.vecCache.put(e)
		}
	}
	return out
}

// embedCandidates embeds, in one call, the text of each candidate of idx
// whose vector knownVectors did not find (vecs[k] nil) and whose snapshot
// was read, puts the vectors in vecs, and caches and keeps them. One
// whose entity went between the transactions keeps none: no topic
// similarity.
func (s *Service) embedCandidates(ctx context.Context, r *ranking, idx []int, vecs [][]byte) error {
	var missing []string
	var at []int
	for k, i := range idx {
		if _, read := r.ents[i]; vecs[k] == nil && read {
			missing = append(missing, r.text(i))
			at = append(at, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hashes := make([]string, len(missing))
	for j, t := range missing {
		hashes[j] = entityTextHash(t)
	}
	got, own, err := s.flights.embed(ctx, s.embedder, missing, hashes)
	if err != nil {
		return fmt.Errorf("embed topic candidates: %w", err)
	}
	name := s.embedder.Name()
	keep := make([]vector.EntityEmbedding, 0, len(at))
	for j, k := range at {
		// Packed as the entity store keeps it (8 bits a component),
		// so that a ranking is the same whether an entity's vector
		// was stored yet or not.
		e := vector.EntityEmbedding{UserID: r.userID, EntityID: r.stats[idx[k]].ID,
			Space: vector.Space{Embedder: name, Dimension: len(got[j])}, TextHash: hashes[j], Embedding: got[j]}
		if own[j] {
			keep = append(keep, e)
		}
		vecs[k] = s.vecCache.put(e)
	}
	if s.entityVecs != nil && len(keep) > 0 {
		// Those not stored yet (the worker is behind, after a bulk load
		// say) are kept, so that the next load, and the worker, find them
		// done. A vector another load embedded, that load keeps (for
		// an entity of the same text but another id, the worker will).
		// Add leaves a stored vector alone, even a stale one, which
		// only the worker, reading the entity as it is, replaces.
		if err := s.entityVecs.Add(ctx, keep...); err != nil {
			s.log.Warn("context: keep entity embeddings", "err", err)
		}
	}
	return nil
}

// topicScanBatch and topicScanMaxBatch bound how many snapshots
// topicCandidates reads at a time while it looks for entities whose text
// names the topic: the first read is topicScanBatch, each next one what
// the matches found so far say is still needed (a quarter more), between
// the two bounds. A topic that many entities name is found in a read or
// two, with few snapshots read for nothing; one that few or none name
// costs a few reads rather than one per 250 entities, which is what a
// round trip to Neo4j or PostgreSQL makes expensive. The order of the scan
// and where it stops do not depend on the batches.
const (
	topicScanBatch    = 250
	topicScanMaxBatch = 4000
)

// nextScanBatch is the size of the keyword scan's next read, having
// scanned entities and found matches of the needed ones.
func (l contextLimits) nextScanBatch(scanned, found, needed, last int) int {
	n := 4 * last
	if found > 0 {
		n = (needed-found)*scanned/found + (needed-found)*scanned/found/4
	}
	return max(l.scanBatch, min(n, l.scanMaxBatch))
}

// topicCandidates picks the entities to embed for topic similarity: the
// MaxTopicCandidates best by the other signals, and up to as many more
// whose text contains a word of the topic, looked for in the candidates'
// order (most recently observed first), so that an old, rarely seen entity
// that names the topic is still found. It reads the snapshots of the
// entities it looks into, and of those of the first MaxTopicCandidates
// whose text signature holds no text hash (graph.TextSig.TextHash: their
// cached or stored vectors are found by that hash). Then fetch starts
// reading the stored embeddings of those whose vectors are not cached,
// which goes on while the others are looked for; the pending read (nil
// when there is none) is returned with the candidates.
func (r *ranking) topicCandidates(ctx context.Context, tx *graph.Tx, topic string,
	fetch func(ctx context.Context, r *ranking, idx []int) *pending[[]vector.EntityEmbedding]) ([]int, *pending[[]vector.EntityEmbedding], error) {
	limit := r.limits.topicCandidates
	if len(r.stats) <= limit {
		all := make([]int, len(r.stats))
		for i := range all {
			all[i] = i
		}
		if err := r.read(ctx, tx, r.unhashed(all)); err != nil {
			return nil, nil, err
		}
		return all, fetch(ctx, r, all), nil
	}
	out := r.topByBase(limit)
	if err := r.read(ctx, tx, r.unhashed(out)); err != nil {
		return nil, nil, err
	}
	stored := fetch(ctx, r, out)
	chosen := make(map[int]bool, len(out))
	for _, i := range out {
		chosen[i] = true
	}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return out, stored, nil
	}
	extra, scanned, screen := 0, 0, true
	for start, size := 0, r.limits.scanBatch; start < len(r.stats) && extra < limit; start, size = start+size, r.limits.nextScanBatch(scanned, extra, limit, size) {
		var batch []int
		for i := start; i < min(start+size, len(r.stats)); i++ {
			if !chosen[i] {
				batch = append(batch, i)
			}
		}
		screened, err := r.readScreened(ctx, tx, batch, words, &screen)
		if err != nil {
			return nil, stored, err
		}
		for _, i := range batch {
			if extra >= limit {
				break
			}
			scanned++
			if !screened[i] {
				continue // it holds none of the words
			}
			text := strings.ToLower(r.text(i))
			for _, w := range words {
				if strings.Contains(text, w) {
					out = append(out, i)
					extra++
					break
				}
			}
		}
	}
	return out, stored, nil
}

// topByBase returns the k candidates of highest base score, the lower
// index first among equal scores, in that order: the first k of every
// candidate sorted so, without sorting them all by a comparison function
// (2.4 ms of CPU a load for 10,000). k must be between 1 and the number
// of candidates.
func (r *ranking) topByBase(k int) []int {
	kth := kthLargest(slices.Clone(r.base), k)
	out := make([]int, 0, k)
	for i, b := range r.base { // fewer than k are above the k-th
		if b > kth {
			out = append(out, i)
		}
	}
	for i, b := range r.base {
		if len(out) == k {
			break
		}
		if b == kth {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b int) int { return cmp.Or(cmp.Compare(r.base[b], r.base[a]), cmp.Compare(a, b)) })
	return out
}

// kthLargest returns the k-th largest of xs (k from 1), which it reorders:
// a quickselect whose three-way partition keeps it linear when many
// values are equal, as scores often are. xs must hold no NaN.
func kthLargest(xs []float64, k int) float64 {
	want := len(xs) - k // its index were xs sorted in ascending order
	lo, hi := 0, len(xs)
	for {
		p := xs[lo+(hi-lo)/2]
		lt, i, gt := lo, lo, hi // [lo,lt) < p, [lt,i) == p, [gt,hi) > p
		for i < gt {
			switch {
			case xs[i] < p:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case xs[i] > p:
				gt--
				xs[i], xs[gt] = xs[gt], xs[i]
			default:
				i++
			}
		}
		switch {
		case want < lt:
			hi = lt
		case want >= gt:
			lo = gt
		default:
			return p
		}
	}
}

// readScreened reads the snapshots of those of the candidates idx that
// may contain one of words and returns which they are. First the text
// signatures read with the statistics (graph.TextSig) rule out those that
// cannot, which costs nothing more than the read that listed them. Then,
// while screening pays (the last screen kept at most half of its batch),
// the backend tells which of the others cannot either
// (graph.Tx.ScreenEntityText: entities written before signatures were
// kept, and signatures' false yeses), without their snapshots being read
// and decoded, which is most of what a keyword scan costs when few
// entities hold the words; once most do, the batch is read whole, since a
// screen would read each row twice. Candidates whose text an earlier load
// read are neither screened nor read: the text cache holds their text
// (cachedTexts), which is what a topic that most entities name saves most
// of its reads by. Which entities are read changes nothing else: the
// decoded text decides.
func (r *ranking) readScreened(ctx context.Context, tx *graph.Tx, idx []int, words []string, screen *bool) (map[int]bool, error) {
	var maybe []int
	out := make(map[int]bool)
	for _, i := range idx {
		if r.stats[i].TextSig.MayContainAny(words) {
			maybe = append(maybe, i)
			out[i] = true
		}
	}
	maybe = r.cachedTexts(maybe)
	for _, i := range maybe {
		delete(out, i) // decided by the screen and the read below
	}
	if *screen && len(maybe) > 0 {
		ids := make([]string, len(maybe))
		at := make(map[string]int, len(maybe))
		for k, i := range maybe {
			ids[k], at[r.stats[i].ID] = r.stats[i].ID, i
		}
		kept, err := tx.ScreenEntityText(ctx, r.userID, ids, words)
		if err != nil {
			return nil, err
		}
		*screen = 2*len(kept) <= len(maybe)
		maybe = make([]int, len(kept))
		for k, id := range kept {
			maybe[k] = at[id]
		}
	}
	if err := r.read(ctx, tx, maybe); err != nil {
		return nil, err
	}
	for _, i := range maybe {
		out[i] = true
	}
	return out, nil
}
