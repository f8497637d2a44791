package knowledge

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// The ranking of get_user_context used to read and decode every candidate's
// snapshot (ListEntities) and rank the decoded entities. It now ranks from
// ListEntityStats and reads only the snapshots it needs. The old
// computation lives on here, verbatim, so that TestRankingMatchesFullRead
// can prove on random data that both give the same entities, in the same
// order, with the same scores.

// oldRanked is the old contextGraph's ranking: every readable candidate
// read in full, then ranked.
func (s *Service) oldRanked(ctx context.Context, c Caller, topic string) ([]rankedEntity, error) {
	var cands []graph.Entity
	var degree map[string]int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		counts, err := tx.EntityTypeCounts(ctx, c.UserID)
		if err != nil {
			return err
		}
		set, err := s.schemas.For(ctx, c.UserID)
		if err != nil {
			return err
		}
		types := append(set.Types(), slices.Collect(maps.Keys(counts))...)
		slices.Sort(types)
		readable := []string{}
		for _, t := range slices.Compact(types) {
			if c.readable(t) {
				readable = append(readable, t)
			}
		}
		const page = 1000
		for off := 0; off < s.limits.candidates; off += page {
			ents, _, err := tx.ListEntities(ctx, graph.EntityFilter{UserID: c.UserID, Types: readable, Page: graph.Page{Limit: page, Offset: off}})
			if err != nil {
				return err
			}
			cands = append(cands, ents...)
			if len(ents) < page {
				break
			}
		}
		ids := make([]string, len(cands))
		for i, e := range cands {
			ids[i] = e.ID
		}
		edges, err := tx.Edges(ctx, graph.EdgeQuery{UserID: c.UserID, EntityIDs: ids, Direction: graph.Both})
		if err != nil {
			return err
		}
		degree = map[string]int{}
		for _, e := range edges {
			if c.readable(e.TargetType) {
				degree[e.SourceEntityID]++
			}
			if c.readable(e.SourceType) {
				degree[e.TargetEntityID]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.oldRankEntities(ctx, cands, degree, topic)
}

// oldRankEntities scores the candidates and returns the best
// ContextTopEntities, best first.
func (s *Service) oldRankEntities(ctx context.Context, cands []graph.Entity, degree map[string]int, topic string) ([]rankedEntity, error) {
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
		idx := oldTopicCandidates(cands, topic, base, s.limits.topicCandidates)
		vecs, err := s.oldTopicVectors(ctx, topic, cands, idx)
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

// oldTopicVectors returns the topic's embedding followed by one vector per
// candidate of idx. A candidate's vector is its stored entity embedding
// when there is one of the configured embedder made from the entity's
// current text; the others, and the topic, are embedded in one call.
func (s *Service) oldTopicVectors(ctx context.Context, topic string, cands []graph.Entity, idx []int) ([][]float32, error) {
	out := make([][]float32, len(idx)+1)
	texts := make([]string, len(idx))
	for k, i := range idx {
		texts[k] = graph.EntityText(cands[i])
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
		out[k] = vector.RoundInt8(vecs[j+1]) // entity vectors count at 8 bits, as stored
	}
	return out, nil
}

// oldTopicCandidates picks the entities to embed for topic similarity: the
// limit best by the other signals, and up to as many more
// whose text contains a word of the topic, so that an old, rarely seen
// entity that names the topic is still found.
func oldTopicCandidates(cands []graph.Entity, topic string, base func(int) float64, limit int) []int {
	all := make([]int, len(cands))
	for i := range all {
		all[i] = i
	}
	if len(cands) <= limit {
		return all
	}
	slices.SortFunc(all, func(a, b int) int { return cmp.Or(cmp.Compare(base(b), base(a)), cmp.Compare(a, b)) })
	chosen := map[int]bool{}
	out := slices.Clone(all[:limit])
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
		if extra >= limit || len(words) == 0 {
			break
		}
		if chosen[i] {
			continue
		}
		text := strings.ToLower(graph.EntityText(e))
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

// ranked is the ranking of get_user_context as UserContext computes it:
// contextGraph, with the topic embedded beside it.
func (s *Service) ranked(ctx context.Context, c Caller, topic string) ([]rankedEntity, error) {
	var topicVec *pending[[]float32]
	if topic != "" {
		topicVec = goPending(func() ([]float32, error) { return s.embedTopic(ctx, topic) })
		defer topicVec.wait(context.Background())
	}
	var in contextInput
	err := s.contextGraph(ctx, c, topic, topicVec, &in)
	return in.ranked, err
}

// rankingCallers are the callers the context equivalence tests rank for:
// one that may read every type, one that may not read two of them, and one
// that may read no entity at all.
var rankingCallers = map[string]Caller{
	"everything": {UserID: "user-alice"},
	"some types": {UserID: "user-alice", Allowed: func(_ Action, r string) bool {
		return r != EntityResource("secret") && r != EntityResource("task")
	}},
	"no type": {UserID: "user-alice", Allowed: func(_ Action, r string) bool { return r == ResourceProfile }},
}

// TestRankingMatchesFullRead compares the ranking of get_user_context with
// the old computation (oldRanked) on random graphs, on both backends:
// without and with topics, for callers that may read every type or only
// some, with ties on recency, observation counts and degrees, merged
// entities, ended relationships and self-loops, and more entities than the
// topic ranking embeds, so that its keyword candidates are looked for.
func TestRankingMatchesFullRead(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	callers := rankingCallers
	topics := []string{"", "alpha project", "Zürich beta 42", "x y", "nothing matches qqqq", "4217 GAMMA"}
	for _, b := range GraphBackends {
		t.Run(b.Name, func(t *testing.T) {
			for seed, n := range []int{0, 1, 37, scaled(900), scaled(2600)} {
				t.Run(fmt.Sprintf("entities=%d", n), func(t *testing.T) {
					g := b.Open(t)
					rnd := rand.New(rand.NewPCG(uint64(seed), 7))
					randomGraph(t, g, rnd, "user-alice", n, now)
					randomGraph(t, g, rnd, "user-bob", min(n, 50), now)
					svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: embed.NewLocal()}))
					for cname, c := range callers {
						for _, topic := range topics {
							want, err := svc.oldRanked(t.Context(), c, topic)
							if err != nil {
								t.Fatal(err)
							}
							got, err := svc.ranked(t.Context(), c, topic)
							if err != nil {
								t.Fatal(err)
							}
							if cname == "everything" && n >= ContextTopEntities && len(got) != ContextTopEntities {
								t.Errorf("caller %s, topic %q: %d entities ranked, want %d", cname, topic, len(got), ContextTopEntities)
							}
							if d := gocmp.Diff(want, got, gocmp.AllowUnexported(rankedEntity{})); d != "" {
								t.Errorf("caller %s, topic %q: ranking differs from the full read (-old +new):\n%s", cname, topic, d)
							}
						}
					}
				})
			}
		})
	}
}

// TestRankingMatchesFullReadWithStoredEmbeddings is the same comparison
// when some entities' embeddings are stored and current, some stale, on
// both backends: the vectors the topic ranking reads (those of the best
// candidates while it looks for the others, then the others') must be the
// same either way.
func TestRankingMatchesFullReadWithStoredEmbeddings(t *testing.T) {
	for _, b := range embeddingBackends {
		t.Run(b.name, func(t *testing.T) {
			g, vd := b.open(t)
			testRankingWithStoredEmbeddings(t, g, vd)
		})
	}
}

// embeddingBackends open a graph and an entity-embedding driver of one
// backend.
var embeddingBackends = []struct {
	name string
	open func(t *testing.T) (*graph.Store, vector.EntityDriver)
}{
	{"embedded", func(t *testing.T) (*graph.Store, vector.EntityDriver) {
		db := sqlitetest.Open(t)
		g := graph.NewStore(embedded.New(db))
		t.Cleanup(func() { g.Close() })
		return g, vembedded.New(db)
	}},
	{"postgres", func(t *testing.T) (*graph.Store, vector.EntityDriver) {
		db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := graph.NewStore(graphpostgres.New(db.Pool))
		t.Cleanup(func() { g.Close(); db.Close() })
		return g, pgvector.New(db.Pool, pgvector.Options{})
	}},
}

// TestContextKeepsTheEmbeddingsItComputes: a topic load that had to embed
// candidates (their embeddings not stored yet, the worker being behind)
// stores them, so that the next load embeds only its topic, and leaves a
// stored embedding of an older text alone.
func TestContextKeepsTheEmbeddingsItComputes(t *testing.T) {
	for _, b := range embeddingBackends {
		t.Run(b.name, func(t *testing.T) {
			g, vd := b.open(t)
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			randomGraph(t, g, rand.New(rand.NewPCG(5, 13)), "user-alice", scaled(1200), now)
			texts := &countTexts{Embedder: embed.NewLocal()}
			entityVecs := vector.NewEntityStore(vd)
			// The store's vectors, not the cache's (TestTopicVectorCache).
			svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: texts, EntityEmbeddings: entityVecs,
				EntityVectorCache: -1}))
			c := Caller{UserID: "user-alice"}
			// One stored embedding of an older text.
			var stale graph.Entity
			err := g.View(t.Context(), func(tx *graph.Tx) error {
				ents, _, err := tx.ListEntities(t.Context(), graph.EntityFilter{UserID: c.UserID, Page: graph.Page{Limit: 1}})
				stale = ents[0]
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			old := vector.EntityEmbedding{UserID: c.UserID, EntityID: stale.ID, Space: vector.Space{Embedder: texts.Name(), Dimension: texts.Dimension()},
				TextHash: "an older text", Embedding: make([]float32, texts.Dimension())}
			old.Embedding[0] = 1
			if err := entityVecs.Put(t.Context(), old); err != nil {
				t.Fatal(err)
			}

			first, err := svc.ranked(t.Context(), c, "alpha project")
			if err != nil {
				t.Fatal(err)
			}
			if n := texts.n.Load(); n < int64(svc.limits.topicCandidates) {
				t.Fatalf("the first load embedded %d texts; the test wants the candidates embedded during the call", n)
			}
			texts.n.Store(0)
			second, err := svc.ranked(t.Context(), c, "alpha project")
			if err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(first, second, gocmp.AllowUnexported(rankedEntity{})); d != "" {
				t.Errorf("the second load ranks otherwise (-first +second):\n%s", d)
			}
			// The topic, and the entity whose stored vector is stale.
			if n := texts.n.Load(); n != 2 {
				t.Errorf("the second load embedded %d texts, want 2 (the topic and the stale entity)", n)
			}
			got, err := entityVecs.Get(t.Context(), c.UserID, []string{stale.ID})
			if err != nil || len(got) != 1 || got[0].TextHash != old.TextHash {
				t.Errorf("the stale embedding after two loads: %+v, %v; want it left to the worker", got, err)
			}
		})
	}
}

// countTexts counts the texts an embedder embeds.
type countTexts struct {
	embed.Embedder
	n atomic.Int64
}

func (c *countTexts) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func testRankingWithStoredEmbeddings(t *testing.T, g *graph.Store, vd vector.EntityDriver) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(3, 11))
	randomGraph(t, g, rnd, "user-alice", scaled(1500), now)
	svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: embed.NewLocal(),
		EntityEmbeddings: vector.NewEntityStore(vd)}))
	if _, err := svc.DrainEntityOutbox(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Change some snapshots after their embeddings were stored.
	err := g.Update(t.Context(), func(tx *graph.Tx) error {
		ents, _, err := tx.ListEntities(t.Context(), graph.EntityFilter{UserID: "user-alice", Page: graph.Page{Limit: scaled(300)}})
		if err != nil {
			return err
		}
		for i, e := range ents {
			if i%2 == 1 {
				continue
			}
			e.Snapshot["status"] = "alpha changed"
			if err := tx.PutEntity(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := Caller{UserID: "user-alice"}
	for _, topic := range []string{"", "alpha project", "beta 7"} {
		want, err := svc.oldRanked(t.Context(), c, topic)
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.ranked(t.Context(), c, topic)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(want, got, gocmp.AllowUnexported(rankedEntity{})); d != "" {
			t.Errorf("topic %q: ranking differs from the full read (-old +new):\n%s", topic, d)
		}
	}
}

// TestContextStatsPaths compares the two ways contextStats reads the type
// counts and the readable candidates: from one list of every entity (fewer
// entities than the limit) and, past the limit, from EntityTypeCounts and a
// list filtered by type in the backend. With the limit at the number of
// entities, the second path lists every readable entity too, so both must
// give the same counts and the same statistics in the same order.
func TestContextStatsPaths(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	callers := rankingCallers
	for _, b := range GraphBackends {
		t.Run(b.Name, func(t *testing.T) {
			g := b.Open(t)
			rnd := rand.New(rand.NewPCG(5, 13))
			randomGraph(t, g, rnd, "user-alice", scaled(700), now)
			randomGraph(t, g, rnd, "user-bob", 50, now)
			var live int
			err := g.View(t.Context(), func(tx *graph.Tx) error {
				counts, err := tx.EntityTypeCounts(t.Context(), "user-alice")
				for _, n := range counts {
					live += n
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for name, c := range callers {
				type result struct {
					Counts map[string]int
					Stats  []graph.EntityStat
				}
				read := func(limit int) result {
					var r result
					err := g.View(t.Context(), func(tx *graph.Tx) error {
						var err error
						r.Counts, r.Stats, err = contextStats(t.Context(), tx, c, []string{"company", "unused"}, limit, true)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					return r
				}
				one, two := read(live+1), read(live)
				// A driver lists an entity's degrees in no particular order.
				byType := cmpopts.SortSlices(func(a, b graph.Degree) bool { return a.Type < b.Type })
				if d := gocmp.Diff(two, one, byType); d != "" {
					t.Errorf("caller %s: one list differs from counts and a filtered list (-two reads +one):\n%s", name, d)
				}
				if name == "everything" && len(one.Stats) != live {
					t.Errorf("caller %s: %d candidates, want %d", name, len(one.Stats), live)
				}
			}
		})
	}
}

// randomGraph stores n random entities of user and relationships between
// them. Values are drawn from small sets so that scores tie.
func randomGraph(t *testing.T, g *graph.Store, rnd *rand.Rand, user string, n int, now time.Time) {
	t.Helper()
	types := []string{"company", "person", "task", "secret", "project"}
	words := []string{"alpha", "beta", "gamma", "Zürich", "project", "42", "delta", "notes", "Notes&Alpha", "<GAMMA>", "4217"}
	ids := make([]string, n)
	err := g.Update(t.Context(), func(tx *graph.Tx) error {
		for i := range n {
			ids[i] = fmt.Sprintf("ent_%s_%05d", user, i)
			typ := types[rnd.IntN(len(types))]
			at := now.Add(-time.Duration(rnd.IntN(60)) * 24 * time.Hour)
			if rnd.IntN(10) == 0 {
				at = now.Add(time.Hour) // observed "after" now: age 0
			}
			name := fmt.Sprintf("%s %d", typ, rnd.IntN(1000))
			if rnd.IntN(20) == 0 {
				name = strings.Repeat("long name ", 40) + words[rnd.IntN(len(words))]
			}
			snap := map[string]any{"name": name, "flag": rnd.IntN(2) == 0, "tags": []any{words[rnd.IntN(len(words))]}}
			if rnd.IntN(2) == 0 {
				snap["count"] = json.Number(fmt.Sprint(rnd.IntN(100)))
			}
			if rnd.IntN(3) == 0 {
				// Bytes that are not UTF-8, which come back as U+FFFD:
				// the signature holds no text hash, and the ranking
				// reads the snapshot for it.
				snap["raw"] = "bytes \xff\xfe " + words[rnd.IntN(len(words))]
			}
			var desc []string
			for range rnd.IntN(6) {
				desc = append(desc, words[rnd.IntN(len(words))])
			}
			if len(desc) > 0 {
				snap["description"] = strings.Join(desc, " ")
			}
			e := graph.Entity{ID: ids[i], UserID: user, Type: typ, CanonicalName: name, SchemaVersion: "1.0", Snapshot: snap,
				ObservationCount: 1 + rnd.IntN(5), LastObservationAt: at, CreatedAt: at, ComputedAt: at}
			if i > 0 && rnd.IntN(15) == 0 {
				e.MergedInto, e.MergedAt = ids[rnd.IntN(i)], at
			}
			if err := tx.PutEntity(t.Context(), e); err != nil {
				return err
			}
			if err := tx.EnqueueOutbox(t.Context(), user, []string{e.ID}, at); err != nil {
				return err
			}
		}
		seen := map[string]bool{}
		for k := range n / 2 {
			src, dst := ids[rnd.IntN(n)], ids[rnd.IntN(n)]
			if k == 0 {
				dst = src // a self-loop counts at both ends
			}
			typ := []string{graph.RefersTo, graph.PartOf}[rnd.IntN(2)]
			if seen[graph.RelationshipID(typ, src, dst)] {
				continue
			}
			seen[graph.RelationshipID(typ, src, dst)] = true
			at := now.Add(-time.Duration(rnd.IntN(30)) * 24 * time.Hour)
			r := graph.Relationship{ID: graph.RelationshipID(typ, src, dst), UserID: user, Type: typ,
				SourceEntityID: src, TargetEntityID: dst, CreatedAt: at, LastObservationAt: at}
			if rnd.IntN(8) == 0 {
				r.EndedAt = at.Add(time.Hour)
			}
			if err := tx.PutRelationship(t.Context(), r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTextSigCoversEntityText: the text signature the drivers keep
// (graph.EntityTextSig) never rules out a word that the keyword scan of
// topicCandidates would find in the entity's text, which is graph.EntityText's
// (cut at graph.MaxEntityText, numbers as scalarText writes them) rather than
// the signature's own.
func TestTextSigCoversEntityText(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 9))
	pieces := []string{"Rocket", "launch", "ZÜRICH", "café", "İstanbul", "KELVIN", "straße", "ΣΑΣ", "42", "x_y", "<b>", "a\nb", "ﬁle", "\xff\xfe"}
	text := func() string {
		var b strings.Builder
		for range 1 + rnd.IntN(40) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
			b.WriteString([]string{"", " ", "-", "_", "; "}[rnd.IntN(5)])
		}
		return b.String()
	}
	for range 2000 {
		snap := map[string]any{"a": text(), "b": json.Number(fmt.Sprint(rnd.IntN(1e6))), "c": float64(rnd.IntN(1e9)) * 1e15,
			"d": rnd.IntN(100), "e": nil, "f": true, "g": []any{"hidden"}}
		if rnd.IntN(2) == 0 {
			snap["h"] = text()
		}
		e := graph.Entity{Type: []string{"space_probe", "person", "Ünit"}[rnd.IntN(3)], CanonicalName: text(), Snapshot: snap}
		sig := graph.EntityTextSig(e)
		lower := strings.ToLower(graph.EntityText(e))
		for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			for i := range w {
				for j := i + 3; j <= len(w); j++ {
					if sub := w[i:j]; utf8.ValidString(sub) && !sig.MayContain(sub) {
						t.Fatalf("the signature rules out %q, which the text %q holds", sub, lower)
					}
				}
			}
		}
	}
}

// TestTopicScanSkipsWhatSignaturesRuleOut: with a topic no entity names, the
// keyword scan settles the candidates past the first limits.topicCandidates by
// their text signatures, and neither asks the backend to screen them nor
// reads them (the rankings are the same either way: TestRankingMatchesFullRead).
func TestTopicScanSkipsWhatSignaturesRuleOut(t *testing.T) {
	d, g, _ := countedRandomGraph(t, scaled(3000))
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: embed.NewLocal()}))
	limit := svc.limits.topicCandidates
	if _, err := svc.ranked(t.Context(), rankingCallers["everything"], "nothing matches qqqq"); err != nil {
		t.Fatal(err)
	}
	t.Logf("screened %d, read %d", d.screened.Load(), d.read.Load())
	// About 1,800 candidates past the first 1,000 (at full scale); none
	// names the topic.
	if n := d.screened.Load(); n > int64(scaled(90)) {
		t.Errorf("the backend screened %d entities; the signatures rule out nearly all", n)
	}
	if n := d.read.Load(); n > int64(limit+ContextTopEntities+scaled(90)) {
		t.Errorf("read %d entities; want about the %d best and the %d shown", n, limit, ContextTopEntities)
	}
}

// TestTopicRankingReadsNoSnapshotItsHashesSpare: once every entity's
// embedding is stored, a topic load finds the vectors of the best
// candidates whose text signatures hold their text hashes without reading
// their snapshots; it reads those without one (texts with bytes that are
// not UTF-8), the entities it looks into for the topic's words, and those
// it shows. The ranking is the same as the full read's.
func TestTopicRankingReadsNoSnapshotItsHashesSpare(t *testing.T) {
	// More entities than limits.topicCandidates, so that there are best
	// candidates and others.
	d, g, db := countedRandomGraph(t, scaled(1500))
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	texts := &countTexts{Embedder: embed.NewLocal()}
	svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: texts,
		EntityEmbeddings: vector.NewEntityStore(vembedded.New(db))}))
	limit := svc.limits.topicCandidates
	if _, err := svc.DrainEntityOutbox(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := rankingCallers["everything"]
	for _, topic := range []string{"nothing matches qqqq", "alpha project"} {
		want, err := svc.oldRanked(t.Context(), c, topic)
		if err != nil {
			t.Fatal(err)
		}
		d.read.Store(0)
		texts.n.Store(0)
		got, err := svc.ranked(t.Context(), c, topic)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(rankedEntity{})); diff != "" {
			t.Errorf("topic %q: ranking differs from the full read (-old +new):\n%s", topic, diff)
		}
		if n := texts.n.Load(); n != 1 {
			t.Errorf("topic %q: embedded %d texts, want only the topic's", topic, n)
		}
		t.Logf("topic %q: read %d entities", topic, d.read.Load())
		// About a third of the best limit candidates have bytes that
		// are not UTF-8 in their text; a topic no entity names needs no
		// other read but the entities shown.
		if n := d.read.Load(); topic == "nothing matches qqqq" && n > int64(limit*45/100+ContextTopEntities) {
			t.Errorf("topic %q: read %d entities; the text hashes of about two thirds of the %d best spare theirs", topic, n, limit)
		}
	}
}

// countedRandomGraph is an embedded store, its driver counting reads,
// holding randomGraph's n entities of user-alice.
func countedRandomGraph(t *testing.T, n int) (*countingDriver, *graph.Store, *sqlite.DB) {
	db := sqlitetest.Open(t)
	d := &countingDriver{Driver: embedded.New(db)}
	g := graph.NewStore(d)
	t.Cleanup(func() { g.Close() })
	randomGraph(t, g, rand.New(rand.NewPCG(5, 7)), "user-alice", n, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	return d, g, db
}

// countingDriver counts the entities its transactions read by id and ask
// the backend to screen.
type countingDriver struct {
	graph.Driver
	read, screened atomic.Int64
}

func (d *countingDriver) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.Driver.View(ctx, func(tx graph.DriverTx) error { return fn(&countingTx{DriverTx: tx, d: d}) })
}

type countingTx struct {
	graph.DriverTx
	d *countingDriver
}

func (t *countingTx) Entities(ctx context.Context, userID string, ids []string) ([]graph.Entity, error) {
	t.d.read.Add(int64(len(ids)))
	return t.DriverTx.Entities(ctx, userID, ids)
}

func (t *countingTx) ScreenEntityText(ctx context.Context, userID string, ids, words []string) ([]string, error) {
	t.d.screened.Add(int64(len(ids)))
	return t.DriverTx.(graph.TextScreener).ScreenEntityText(ctx, userID, ids, words)
}

// TestTopicScanReadsATextOnce: a topic most entities name makes the
// keyword scan look into as many candidates as it embeds; a second load
// finds their texts in the text cache by the hashes their signatures hold
// and reads only the snapshots of entities whose signature holds no hash
// and of those it shows. The ranking is the full read's both times.
func TestTopicScanReadsATextOnce(t *testing.T) {
	d, g, _ := countedRandomGraph(t, scaled(3000))
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := withTestLimits(NewService(g, schema.NewRegistry(), Options{Now: func() time.Time { return now }, Embedder: embed.NewLocal()}))
	c := rankingCallers["everything"]
	unhashed := 0
	err := g.View(t.Context(), func(tx *graph.Tx) error {
		stats, err := tx.ListEntityStats(t.Context(), graph.EntityFilter{UserID: c.UserID, Page: graph.Page{Limit: 100_000}, TextSigs: true, WithoutDegrees: true})
		for _, st := range stats {
			if _, ok := st.TextSig.TextHash(); !ok {
				unhashed++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var reads []int64
	for range 2 {
		want, err := svc.oldRanked(t.Context(), c, "alpha project")
		if err != nil {
			t.Fatal(err)
		}
		d.read.Store(0)
		got, err := svc.ranked(t.Context(), c, "alpha project")
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(rankedEntity{})); diff != "" {
			t.Fatalf("ranking differs from the full read (-old +new):\n%s", diff)
		}
		reads = append(reads, d.read.Load())
	}
	t.Logf("read %d, then %d entities; %d have no text hash", reads[0], reads[1], unhashed)
	if reads[1] >= reads[0] || reads[1] > int64(unhashed+ContextTopEntities) {
		t.Errorf("the second load read %d entities (the first %d); want at most the %d without a text hash and the %d shown",
			reads[1], reads[0], unhashed, ContextTopEntities)
	}
}
