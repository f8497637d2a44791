package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Entity search (retrieve_entities with a query).
//
// The text signal is the graph's full-text search (graph.Tx.SearchEntities:
// every word of the query, the last as a prefix, in the canonical name or
// the snapshot's text; FTS5 or a tsvector): one indexed query, whose page
// comes straight from the index, and one read of the page's entities.
//
// The meaning signal, when the service keeps entity embeddings
// (entityembed.go), ranks the readable entities whose stored embedding, of
// the configured embedder, has a cosine similarity of at least
// SearchMinSimilarity to the query's. With MeaningAlways the two rankings
// are fused with reciprocal rank fusion (vector.Fuse, as memory search
// does): a hit found by both comes first, and each signal brings at most
// searchDepth candidates beyond the page. By default (MeaningFallback) the
// meaning signal is asked only when no entity matches the words, and then
// ranks alone: entity embeddings have no index yet, so the signal reads
// every readable entity's vector, some 50-200 ms at 10,000 entities on the
// embedded store against well under a millisecond for the text signal
// (docs/performance.md), which a lookup that finds its words should not
// pay. MeaningNever keeps to the words. When the user has no embedding of
// the configured embedder, or the embedder does not answer, the text
// signal ranks alone.
//
// Consent is a filter of the query, not of its answer: only the types the
// caller may read are searched, so that a page is never short because of
// consent and a total never counts what the caller may not see.

// SearchMinSimilarity is the cosine similarity an entity's embedding needs
// to match a query by meaning.
const SearchMinSimilarity = 0.4

// searchDepth is how many candidates each signal of a fused search brings
// beyond the end of the page asked for.
const searchDepth = vector.MinDepth

// MeaningMode says when a search asks the meaning signal.
type MeaningMode int

// The meaning modes; the zero value is MeaningFallback.
const (
	// MeaningFallback asks the meaning signal only when no entity
	// matches the words.
	MeaningFallback MeaningMode = iota
	// MeaningAlways fuses the meaning signal with the text one.
	MeaningAlways
	// MeaningNever matches the words only.
	MeaningNever
)

// EntitySearchQuery is a search of the caller's entities.
type EntitySearchQuery struct {
	// Text is what the user typed; it must hold a letter or a digit.
	Text string
	// Meaning says when the meaning signal is asked besides the text one.
	Meaning       MeaningMode
	EntityType    string
	IncludeMerged bool
	Page          graph.Page
	// Complete says that Text is a value being typed, to be completed
	// (complete.go): the entities whose name, one of its later words or
	// id begins with it first, then the word search. Meaning and
	// IncludeMerged do not apply, and Page.Offset must be 0.
	Complete bool
}

// EntitySearchHit is an entity a search found.
type EntitySearchHit struct {
	Entity graph.Entity
	// Score is the text signal's relevance when it ranked the hits alone,
	// and the fused reciprocal-rank score otherwise; higher is better.
	Score float64
	// Similarity is the cosine similarity of the entity's embedding to
	// the query, when it matched by meaning.
	Similarity *float64
	// Signals says which signals found the hit, vector first.
	Signals []vector.Signal
}

// SearchEntities returns a page of the caller's readable entities that
// match q.Text, best first (ties by id), and how many match in all: every
// text match and every meaning match (one that is both, but beyond the
// depth of text matches the fusion read, counts twice).
func (s *Service) SearchEntities(ctx context.Context, c Caller, q EntitySearchQuery) ([]EntitySearchHit, int, error) {
	terms := graph.SearchTerms(q.Text)
	if len(terms) == 0 {
		return nil, 0, invalid("query", "words to search for", "string", "has no letter or digit to search for")
	}
	var out []EntitySearchHit
	var total int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		if q.EntityType != "" {
			if types == nil || slices.Contains(types, q.EntityType) {
				types = []string{q.EntityType}
			} else {
				types = []string{}
			}
		}
		gq := graph.EntitySearch{UserID: c.UserID, Terms: terms, Types: types, IncludeMerged: q.IncludeMerged, Page: q.Page}
		if q.Complete {
			var done bool
			if out, total, done, err = s.completeEntities(ctx, tx, c.UserID, q, types, gq); err != nil || done {
				return err
			}
		}
		var vec []graph.EntityHit
		if q.Meaning == MeaningAlways {
			if vec, err = s.meaningHits(ctx, tx, c.UserID, q.Text, types); err != nil {
				return err
			}
		}
		limit := q.Page.Limit
		if limit <= 0 {
			limit = 100
		}
		var text []graph.EntityHit
		var n int
		if len(vec) == 0 {
			hits, n, err := tx.SearchEntities(ctx, gq)
			if err != nil {
				return err
			}
			if n > 0 || q.Meaning != MeaningFallback {
				total = n
				out, err = s.searchHits(ctx, tx, c.UserID, hits, nil)
				return err
			}
			// No entity has the words: the meaning signal ranks alone.
			if vec, err = s.meaningHits(ctx, tx, c.UserID, q.Text, types); err != nil || len(vec) == 0 {
				return err
			}
		} else {
			gq.Page = graph.Page{Limit: q.Page.Offset + limit + searchDepth}
			if text, n, err = tx.SearchEntities(ctx, gq); err != nil {
				return err
			}
		}
		depth := q.Page.Offset + limit + searchDepth
		fused := vector.Fuse(toScored(vec, depth), toScored(text, depth))
		// Every text match, and the meaning matches among none of those
		// read (one among the text matches beyond the depth counts twice).
		inText := make(map[string]bool, len(text))
		for _, h := range text {
			inText[h.ID] = true
		}
		total = n
		for _, h := range vec {
			if !inText[h.ID] {
				total++
			}
		}
		start := min(max(q.Page.Offset, 0), len(fused))
		fused = fused[start:min(start+limit, len(fused))]
		out, err = s.searchHits(ctx, tx, c.UserID, nil, fused)
		return err
	})
	return out, total, err
}

// searchHits reads the entities of a page of hits, text hits or fused ones.
func (s *Service) searchHits(ctx context.Context, tx *graph.Tx, userID string, text []graph.EntityHit, fused []vector.Hit) ([]EntitySearchHit, error) {
	ids := make([]string, 0, len(text)+len(fused))
	for _, h := range text {
		ids = append(ids, h.ID)
	}
	for _, h := range fused {
		ids = append(ids, h.ID)
	}
	ents, err := tx.Entities(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]graph.Entity, len(ents))
	for _, e := range ents {
		byID[e.ID] = e
	}
	out := make([]EntitySearchHit, 0, len(ids))
	for _, h := range text {
		if e, ok := byID[h.ID]; ok {
			out = append(out, EntitySearchHit{Entity: e, Score: h.Score, Signals: []vector.Signal{vector.SignalText}})
		}
	}
	for _, h := range fused {
		if e, ok := byID[h.ID]; ok {
			out = append(out, EntitySearchHit{Entity: e, Score: h.Score, Similarity: h.Similarity, Signals: h.Signals})
		}
	}
	return out, nil
}

// meaningHits ranks the user's unmerged entities of types (nil: any) by the
// similarity of their stored embeddings to text, best first, keeping those
// of at least SearchMinSimilarity. It returns nil when the service keeps no
// entity embeddings or the user has none of the configured embedder.
//
// The vectors come from the entity-vector cache that context loading
// fills (vectorcache.go) where it holds the entity's current text, and
// from the store otherwise; what is read of the current text is cached
// for the next search. Both are scored packed, as the store keeps them,
// so a search answers the same whether the cache held a vector or not.
// Reading every embedding from the store was most of a meaning search:
// 250 ms at 10,000 entities on the embedded store.
func (s *Service) meaningHits(ctx context.Context, tx *graph.Tx, userID, text string, types []string) ([]graph.EntityHit, error) {
	if s.entityVecs == nil || (types != nil && len(types) == 0) {
		return nil, nil
	}
	stats, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: userID, Types: types, Page: graph.Page{Limit: s.limits.candidates},
		TextSigs: s.vecCache != nil, WithoutDegrees: true})
	if err != nil {
		return nil, err
	}
	name, dim := s.embedder.Name(), s.embedder.Dimension()
	type candidate struct {
		id     string
		packed []byte
	}
	cands := make([]candidate, 0, len(stats))
	var uncached []string
	current := map[string]string{} // text hashes of the uncached, where known
	for _, e := range stats {
		if h, ok := e.TextSig.TextHash(); ok {
			if p := s.vecCache.get(userID, name, dim, h); p != nil {
				cands = append(cands, candidate{e.ID, p})
				continue
			}
			current[e.ID] = h
		}
		uncached = append(uncached, e.ID)
	}
	if len(uncached) > 0 {
		stored, err := s.entityVecs.Get(ctx, userID, uncached)
		if err != nil {
			// The vectors are a cache of what the text signal need not have.
			s.log.Warn("search entities: read entity embeddings", "err", err)
			return nil, nil
		}
		for _, e := range stored {
			if !s.inEmbedderSpace(e.Space) || !vector.Finite(e.Embedding) {
				continue
			}
			var p []byte
			if h, ok := current[e.EntityID]; ok && h == e.TextHash {
				p = s.vecCache.put(e)
			} else {
				p = vector.PackInt8(e.Embedding)
			}
			cands = append(cands, candidate{e.EntityID, p})
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	qv, err := s.embedder.Embed(ctx, []string{text})
	if err == nil && len(qv) != 1 {
		err = fmt.Errorf("%d vectors for 1 text", len(qv))
	}
	if err != nil {
		// A keyword search still answers while the provider does not.
		s.log.Warn("search entities: embed query", "embedder", name, "err", err)
		return nil, nil
	}
	norm := sumSquares(qv[0])
	var out []graph.EntityHit
	for _, c := range cands {
		if sim := cosinePacked(qv[0], norm, c.packed); sim >= SearchMinSimilarity {
			out = append(out, graph.EntityHit{ID: c.id, Score: sim})
		}
	}
	slices.SortFunc(out, func(a, b graph.EntityHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// toScored is a ranking of entity hits, best first, cut to depth, as
// vector.Fuse takes it.
func toScored(hits []graph.EntityHit, depth int) []vector.Scored {
	out := make([]vector.Scored, min(len(hits), depth))
	for i := range out {
		out[i] = vector.Scored{ID: hits[i].ID, Score: hits[i].Score}
	}
	return out
}
