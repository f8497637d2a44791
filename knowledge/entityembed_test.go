package knowledge_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// embedBackend opens the graph and the entity embeddings of one backend at
// a location; opening the same location again is a restart.
type embedBackend struct {
	name     string
	location func(t *testing.T) string
	open     func(t *testing.T, loc string) (*graph.Store, *vector.EntityStore, func())
	// undo006 takes the store at loc back to before migration 006, which
	// the next open applies again: an upgrade of an existing store.
	undo006 func(t *testing.T, loc string)
}

// undo006SQL takes a store back to before migration 006, and so before
// 012, which rebuilds 006's entity_embeddings.
const undo006SQL = `DROP TABLE graph_outbox; DROP TABLE entity_embeddings; DELETE FROM cairn_schema_migrations WHERE version IN (6, 12)`

var embedBackends = []embedBackend{
	{
		name:     "embedded",
		location: func(t *testing.T) string { return filepath.Join(t.TempDir(), "cairn.db") },
		open: func(t *testing.T, loc string) (*graph.Store, *vector.EntityStore, func()) {
			t.Helper()
			db, err := sqlite.OpenFile(t.Context(), loc)
			if err != nil {
				t.Fatal(err)
			}
			g := graph.NewStore(embedded.New(db))
			return g, vector.NewEntityStore(vembedded.New(db)), func() {
				g.Close()
				db.Close()
			}
		},
		undo006: func(t *testing.T, loc string) {
			t.Helper()
			db, err := sqlite.OpenFile(t.Context(), loc)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Write.ExecContext(t.Context(), undo006SQL); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		name:     "postgres",
		location: func(t *testing.T) string { return pgtest.URL(t) },
		open: func(t *testing.T, loc string) (*graph.Store, *vector.EntityStore, func()) {
			t.Helper()
			db, err := dbpostgres.Open(t.Context(), loc, dbpostgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			g := graph.NewStore(graphpostgres.New(db.Pool))
			return g, vector.NewEntityStore(pgvector.New(db.Pool, pgvector.Options{})), func() {
				g.Close()
				db.Close()
			}
		},
		undo006: func(t *testing.T, loc string) {
			t.Helper()
			db, err := dbpostgres.Open(t.Context(), loc, dbpostgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Pool.Exec(t.Context(), undo006SQL); err != nil {
				t.Fatal(err)
			}
		},
	},
}

// embedEnv is one open backend with a service that keeps entity
// embeddings.
type embedEnv struct {
	svc   *knowledge.Service
	graph *graph.Store
	vecs  *vector.EntityStore
	emb   *countingEmbedder
	clock *clock
	close func()
}

// openEmbedEnv opens loc with a service embedding with emb (a local
// embedder under the name "test:one" when nil).
func openEmbedEnv(t *testing.T, b embedBackend, loc string, emb *countingEmbedder, clk *clock, log *slog.Logger) *embedEnv {
	t.Helper()
	g, vecs, closeFn := b.open(t, loc)
	var once sync.Once
	closer := func() { once.Do(closeFn) }
	t.Cleanup(closer)
	if emb == nil {
		emb = newCountingEmbedder("test:one")
	}
	if clk == nil {
		clk = &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	}
	svc := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
		Now: clk.Now, Embedder: emb, EntityEmbeddings: vecs, Logger: log,
	})
	return &embedEnv{svc: svc, graph: g, vecs: vecs, emb: emb, clock: clk, close: closer}
}

// forEachEmbedBackend runs fn on a fresh location of every backend.
func forEachEmbedBackend(t *testing.T, fn func(t *testing.T, b embedBackend, loc string)) {
	for _, b := range embedBackends {
		t.Run(b.name, func(t *testing.T) { fn(t, b, b.location(t)) })
	}
}

// countingEmbedder is the local embedder under another name, counting the
// texts it embeds; it can be made to fail like a provider that is down.
type countingEmbedder struct {
	embed.Embedder
	name  string
	texts atomic.Int64
	down  atomic.Bool
}

func newCountingEmbedder(name string) *countingEmbedder {
	return &countingEmbedder{Embedder: embed.NewLocal(), name: name}
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.down.Load() {
		return nil, errors.New("connection refused")
	}
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func (c *countingEmbedder) Name() string { return c.name }

func drain(t *testing.T, s *knowledge.Service) knowledge.EntityEmbedStats {
	t.Helper()
	st, err := s.DrainEntityOutbox(t.Context())
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	return st
}

func storedEmbeddings(t *testing.T, v *vector.EntityStore, user string, ids ...string) map[string]vector.EntityEmbedding {
	t.Helper()
	es, err := v.Get(t.Context(), user, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]vector.EntityEmbedding{}
	for _, e := range es {
		out[e.EntityID] = e
	}
	return out
}

var embedFixtures = []map[string]any{
	{"entity_type": "company", "name": "Acme Anvils", "industry": "anvils"},
	{"entity_type": "company", "name": "Globex", "industry": "energy"},
	{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
}

func storedIDs(res knowledge.StoreResult) []string {
	ids := make([]string, len(res.Entities))
	for i, e := range res.Entities {
		ids[i] = e.EntityID
	}
	return ids
}

// TestEntityEmbeddingsFollowWrites checks that store, correct and merge keep
// the embeddings current through the outbox, and that settling an entry
// again is harmless.
func TestEntityEmbeddingsFollowWrites(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		ctx := t.Context()
		ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
		if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 3, Embedded: 3}, drain(t, env.svc)); diff != "" {
			t.Errorf("first drain (-want +got):\n%s", diff)
		}
		got := storedEmbeddings(t, env.vecs, alice.UserID, ids...)
		for _, id := range ids {
			e, ok := got[id]
			if !ok || e.Space != (vector.Space{Embedder: "test:one", Dimension: 384}) || len(e.Embedding) != 384 || e.TextHash == "" {
				t.Errorf("embedding of %s: %+v (present %v)", id, e.Space, ok)
			}
		}
		if len(storedEmbeddings(t, env.vecs, bob.UserID, ids...)) != 0 {
			t.Errorf("alice's entity embeddings are visible to bob")
		}
		if st := drain(t, env.svc); st != (knowledge.EntityEmbedStats{}) {
			t.Errorf("drain of an empty outbox = %+v", st)
		}

		// The same fields from another source: the entity changes, its
		// text does not.
		if _, err := env.svc.Store(ctx, alice, knowledge.StoreRequest{Entities: embedFixtures[:1],
			Provenance: map[string]any{"extractor_version": "2"}}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 1, Unchanged: 1}, drain(t, env.svc)); diff != "" {
			t.Errorf("drain after an unchanged text (-want +got):\n%s", diff)
		}

		before := got[ids[2]].TextHash
		if _, err := env.svc.Correct(ctx, alice, knowledge.CorrectRequest{EntityID: ids[2], EntityType: "person", Field: "email", Value: "ada@new.example"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 1, Embedded: 1}, drain(t, env.svc)); diff != "" {
			t.Errorf("drain after a correction (-want +got):\n%s", diff)
		}
		if after := storedEmbeddings(t, env.vecs, alice.UserID, ids[2])[ids[2]].TextHash; after == before {
			t.Errorf("the correction left the embedding's text hash at %s", after)
		}

		if _, err := env.svc.MergeEntities(ctx, alice, ids[1], ids[0], "duplicate"); err != nil {
			t.Fatal(err)
		}
		st := drain(t, env.svc)
		if st.Entries != 2 || st.Removed != 1 {
			t.Errorf("drain after a merge = %+v, want 2 entries, 1 removed", st)
		}
		got = storedEmbeddings(t, env.vecs, alice.UserID, ids...)
		if _, ok := got[ids[1]]; ok {
			t.Errorf("the merged entity %s still has an embedding", ids[1])
		}
		if _, ok := got[ids[0]]; !ok {
			t.Errorf("the merge target %s lost its embedding", ids[0])
		}
	})
}

// logCapture hands log records to a channel.
type logCapture struct{ ch chan slog.Record }

func (h logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h logCapture) Handle(_ context.Context, r slog.Record) error {
	h.ch <- r.Clone()
	return nil
}
func (h logCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logCapture) WithGroup(string) slog.Handler      { return h }

func recordInt(r slog.Record, key string) int64 {
	var v int64 = -1
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Int64()
			return false
		}
		return true
	})
	return v
}

// TestEntityEmbeddingsRepairAfterCrash stops a process between its graph
// writes and its embedding writes, in the two ways that can happen, and
// checks that the next start repairs them.
func TestEntityEmbeddingsRepairAfterCrash(t *testing.T) {
	t.Run("WorkerNeverRan", func(t *testing.T) {
		forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
			env := openEmbedEnv(t, b, loc, nil, nil, nil)
			ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
			env.close() // the process stops: the graph committed, no embedding was written

			logs := logCapture{ch: make(chan slog.Record, 64)}
			env = openEmbedEnv(t, b, loc, nil, nil, slog.New(logs))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				env.svc.RunEntityEmbeddings(ctx)
			}()
			for r := range logs.ch {
				if r.Message == "entity embeddings: repair at start" {
					t.Fatalf("repair failed: %v", r)
				}
				if r.Message == "entity embeddings: repaired at start" {
					if n := recordInt(r, "repaired"); n != 3 {
						t.Errorf("repaired = %d, want 3", n)
					}
					break
				}
			}
			cancel()
			<-done
			if got := storedEmbeddings(t, env.vecs, alice.UserID, ids...); len(got) != 3 {
				t.Errorf("after the repair, %d of 3 entities have embeddings", len(got))
			}
		})
	})
	t.Run("VectorWriteFailed", func(t *testing.T) {
		forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
			down := newCountingEmbedder("test:one")
			down.down.Store(true)
			env := openEmbedEnv(t, b, loc, down, nil, nil)
			ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
			var embErr *knowledge.EmbedderError
			if _, err := env.svc.DrainEntityOutbox(t.Context()); !errors.As(err, &embErr) {
				t.Fatalf("drain with the embedder down = %v, want an EmbedderError", err)
			}
			if got := storedEmbeddings(t, env.vecs, alice.UserID, ids...); len(got) != 0 {
				t.Fatalf("embeddings written although the embedder failed: %d", len(got))
			}
			env.close()

			// The failed batch was released: the next start repairs it.
			env = openEmbedEnv(t, b, loc, nil, nil, nil)
			if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 3, Embedded: 3}, drain(t, env.svc)); diff != "" {
				t.Errorf("drain after the restart (-want +got):\n%s", diff)
			}
			if got := storedEmbeddings(t, env.vecs, alice.UserID, ids...); len(got) != 3 {
				t.Errorf("after the repair, %d of 3 entities have embeddings", len(got))
			}
		})
	})
	t.Run("DiedHoldingAClaim", func(t *testing.T) {
		forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
			env := openEmbedEnv(t, b, loc, nil, nil, nil)
			ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
			// A process claims the entries and dies before it settles or
			// releases them.
			if got, err := env.graph.ClaimOutbox(t.Context(), graph.OutboxClaim{
				Limit: 10, Lease: knowledge.EntityEmbedLease, Now: env.clock.Now(),
			}); err != nil || len(got) != 3 {
				t.Fatalf("claim = %d entries, %v", len(got), err)
			}
			clk := env.clock
			env.close()

			// Restarted within the dead claim's lease, the entries wait
			// for it; once it ends they are repaired.
			env = openEmbedEnv(t, b, loc, nil, clk, nil)
			if st := drain(t, env.svc); st.Entries != 0 {
				t.Errorf("drain within the lease settled %d entries", st.Entries)
			}
			clk.Advance(knowledge.EntityEmbedLease)
			if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 3, Embedded: 3}, drain(t, env.svc)); diff != "" {
				t.Errorf("drain after the lease (-want +got):\n%s", diff)
			}
			if got := storedEmbeddings(t, env.vecs, alice.UserID, ids...); len(got) != 3 {
				t.Errorf("after the repair, %d of 3 entities have embeddings", len(got))
			}
		})
	})
}

// TestMigrationBackfillsExistingEntities upgrades a store whose entities
// predate entity embeddings: migration 006 enqueues the unmerged ones, so
// the first start embeds them.
func TestMigrationBackfillsExistingEntities(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
		if _, err := env.svc.MergeEntities(t.Context(), alice, ids[1], ids[0], "duplicate"); err != nil {
			t.Fatal(err)
		}
		env.close()
		b.undo006(t, loc)

		env = openEmbedEnv(t, b, loc, nil, nil, nil)
		if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 2, Embedded: 2}, drain(t, env.svc)); diff != "" {
			t.Errorf("first drain after the upgrade (-want +got):\n%s", diff)
		}
		got := storedEmbeddings(t, env.vecs, alice.UserID, ids...)
		if _, ok := got[ids[1]]; ok || len(got) != 2 {
			t.Errorf("embeddings after the upgrade: %d, merged one present %v; want the 2 unmerged entities", len(got), ok)
		}
	})
}

// TestConcurrentDrains runs two services (two processes, each with its own
// connections) draining one outbox at once: every entry is settled once.
func TestConcurrentDrains(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		one := openEmbedEnv(t, b, loc, nil, nil, nil)
		two := openEmbedEnv(t, b, loc, nil, nil, nil)
		var batch []map[string]any
		for i := range 150 {
			batch = append(batch, map[string]any{"entity_type": "company", "name": "Company " + string(rune('A'+i%26)) + string(rune('a'+i/26))})
		}
		ids := storedIDs(store(t, one.svc, alice, batch...))
		var wg sync.WaitGroup
		stats := make([]knowledge.EntityEmbedStats, 2)
		errs := make([]error, 2)
		for i, env := range []*embedEnv{one, two} {
			wg.Go(func() { stats[i], errs[i] = env.svc.DrainEntityOutbox(t.Context()) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if n := stats[0].Entries + stats[1].Entries; n != len(ids) {
			t.Errorf("the two drains settled %d + %d entries, want %d in all", stats[0].Entries, stats[1].Entries, len(ids))
		}
		if got := storedEmbeddings(t, one.vecs, alice.UserID, ids...); len(got) != len(ids) {
			t.Errorf("%d of %d entities have embeddings", len(got), len(ids))
		}
	})
}

// TestTopicRankingReadsStoredEmbeddings checks that get_user_context's topic
// ranking uses current stored embeddings, embeds the others itself, and
// ranks exactly as without stored embeddings.
func TestTopicRankingReadsStoredEmbeddings(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		// The store's vectors, not the cache's (TestTopicVectorCache).
		env.svc = knowledge.NewService(env.graph, schema.NewRegistry(), knowledge.Options{
			Now: env.clock.Now, Embedder: env.emb, EntityEmbeddings: env.vecs, EntityVectorCache: -1,
		})
		ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
		req := knowledge.ContextRequest{Topic: "anvils industry"}
		load := func() ([]knowledge.ContextEntity, int64) {
			t.Helper()
			env.emb.texts.Store(0)
			out, err := env.svc.UserContext(t.Context(), alice, req)
			if err != nil {
				t.Fatal(err)
			}
			return out.Entities, env.emb.texts.Load()
		}
		onTheFly, n := load()
		if n != 4 {
			t.Errorf("without stored embeddings, %d texts embedded, want the topic and 3 entities", n)
		}
		drain(t, env.svc)
		stored, n := load()
		if n != 1 {
			t.Errorf("with stored embeddings, %d texts embedded, want the topic only", n)
		}
		if diff := cmp.Diff(onTheFly, stored); diff != "" {
			t.Errorf("ranking with stored embeddings differs (-on the fly +stored):\n%s", diff)
		}
		// An embedding of another embedder is not compared with the topic.
		e := storedEmbeddings(t, env.vecs, alice.UserID, ids[0])[ids[0]]
		e.Space.Embedder = "test:other"
		if err := env.vecs.Put(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		mixed, n := load()
		if n != 2 {
			t.Errorf("with one embedding of another embedder, %d texts embedded, want 2", n)
		}
		if diff := cmp.Diff(onTheFly, mixed); diff != "" {
			t.Errorf("ranking with a foreign embedding differs (-on the fly +mixed):\n%s", diff)
		}
	})
}

// TestTopicVectorCache checks that topic ranking keeps the vectors it used
// by the text they were made from: a later load uses them whatever the
// store holds for the entity, never for a text that changed, and ranks
// exactly as a service without the cache.
func TestTopicVectorCache(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		uncached := knowledge.NewService(env.graph, schema.NewRegistry(), knowledge.Options{
			Now: env.clock.Now, Embedder: newCountingEmbedder("test:one"), EntityEmbeddings: env.vecs, EntityVectorCache: -1,
		})
		ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
		req := knowledge.ContextRequest{Topic: "anvils industry"}
		load := func(what string) int64 {
			t.Helper()
			env.emb.texts.Store(0)
			out, err := env.svc.UserContext(t.Context(), alice, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := uncached.UserContext(t.Context(), alice, req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Entities, out.Entities); diff != "" {
				t.Errorf("%s: the ranking differs from one without the cache (-without +with):\n%s", what, diff)
			}
			return env.emb.texts.Load()
		}
		if n := load("first load"); n != 4 {
			t.Errorf("first load: %d texts embedded, want the topic and 3 entities", n)
		}
		// The store's vector of an entity is replaced by one of another
		// embedder: the cache still holds the vector of its text.
		e := storedEmbeddings(t, env.vecs, alice.UserID, ids[0])[ids[0]]
		e.Space.Embedder = "test:other"
		if err := env.vecs.Put(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if n := load("cached"); n != 1 {
			t.Errorf("with every candidate's text cached, %d texts embedded, want the topic only", n)
		}
		// An entity's text changes: its cached vector is of the old text,
		// and is not used.
		if _, err := env.svc.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: ids[1], EntityType: "company", Field: "industry", Value: "anvils and energy"}); err != nil {
			t.Fatal(err)
		}
		if n := load("one text changed"); n != 2 {
			t.Errorf("with one entity's text changed, %d texts embedded, want the topic and that entity", n)
		}
		if n := load("changed text cached"); n != 1 {
			t.Errorf("once the changed text was embedded, %d texts embedded, want the topic only", n)
		}
	})
}

// TestReembedEntities switches embedder and rebuilds the entity embeddings.
func TestReembedEntities(t *testing.T) {
	forEachEmbedBackend(t, func(t *testing.T, b embedBackend, loc string) {
		env := openEmbedEnv(t, b, loc, nil, nil, nil)
		ids := storedIDs(store(t, env.svc, alice, embedFixtures...))
		store(t, env.svc, bob, embedFixtures[0])
		drain(t, env.svc)
		// One entity changes after the drain: its entry is still queued
		// when reembed runs.
		if _, err := env.svc.Correct(t.Context(), alice, knowledge.CorrectRequest{EntityID: ids[2], EntityType: "person", Field: "email", Value: "ada@new.example"}); err != nil {
			t.Fatal(err)
		}
		env.close()

		env = openEmbedEnv(t, b, loc, newCountingEmbedder("test:two"), nil, nil)
		st, err := env.svc.ReembedEntities(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(knowledge.EntityEmbedStats{Entries: 1, Embedded: 4}, st); diff != "" {
			t.Errorf("reembed (-want +got):\n%s", diff)
		}
		for id, e := range storedEmbeddings(t, env.vecs, alice.UserID, ids...) {
			if e.Space.Embedder != "test:two" {
				t.Errorf("%s is still in %s", id, e.Space.Embedder)
			}
		}
		if st, err := env.svc.ReembedEntities(t.Context()); err != nil || st != (knowledge.EntityEmbedStats{}) {
			t.Errorf("second reembed = %+v, %v; want nothing done", st, err)
		}
	})
}

// TestWorkerUsesBackgroundEmbedder: the worker beside the requests embeds
// with Options.BackgroundEmbedder (in production the model limited to
// fewer cores), and DrainEntityOutbox, which reembed and a start's repair
// call, with the service's own embedder.
func TestWorkerUsesBackgroundEmbedder(t *testing.T) {
	b := embedBackends[0]
	g, vecs, closeFn := b.open(t, filepath.Join(t.TempDir(), "cairn.db"))
	t.Cleanup(closeFn)
	main, background := newCountingEmbedder("test:one"), newCountingEmbedder("test:one")
	logs := logCapture{ch: make(chan slog.Record, 64)}
	svc := knowledge.NewService(g, schema.NewRegistry(), knowledge.Options{
		Embedder: main, BackgroundEmbedder: background, EntityEmbeddings: vecs, Logger: slog.New(logs),
	})
	ids := storedIDs(store(t, svc, alice, embedFixtures...))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunEntityEmbeddings(ctx)
	}()
	for r := range logs.ch {
		if r.Message == "entity embeddings: repaired at start" {
			break
		}
	}
	cancel()
	<-done
	if got := storedEmbeddings(t, vecs, alice.UserID, ids...); len(got) != len(ids) {
		t.Fatalf("the worker embedded %d of %d entities", len(got), len(ids))
	}
	if background.texts.Load() != int64(len(ids)) || main.texts.Load() != 0 {
		t.Errorf("the worker embedded %d texts with the background embedder and %d with the service's; want %d and 0",
			background.texts.Load(), main.texts.Load(), len(ids))
	}
}
