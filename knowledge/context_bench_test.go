package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
	"github.com/cairnkg/cairn/vector/embed/uselite"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// BenchmarkUserContext measures get_user_context (the knowledge call behind
// the tool) as the issue that set its targets asks: 10,000 entities (3,333
// relationships) and 10,000 memories, with the default embedder (the
// built-in sentence model, use-lite) and every entity's embedding stored,
// as the outbox worker keeps them, on the embedded store and on PostgreSQL
// (which skips without CAIRN_TEST_DATABASE_URL). It reports p50 and p95
// latency besides the mean, at the default budget, without a topic, with
// one that the entities name and with one that none names.
//
//	go test -run '^$' -bench UserContext -benchtime 20x ./knowledge/
//
// The memories are real rows of the backend's memory store, in the model's
// space, with random unit vectors: a context load reads their collections
// and the newest ten, never their vectors, and embedding 10,000 texts would
// take minutes. The entity embeddings are the model's own, computed once
// per process (about a minute) and written by the outbox drain on each
// backend. The topic is embedded by the model on every call.
func BenchmarkUserContext(b *testing.B) {
	model, err := uselite.New()
	if errors.Is(err, uselite.ErrUnavailable) {
		b.Skip("the model files are not built in: run scripts/provision-model.sh")
	}
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const entities, memoryRows = 10_000, 10_000
	// The drain on each backend embeds the same 10,000 texts: the second
	// backend reuses the first one's vectors, which are the model's.
	backfillEmbedder := &memoEmbedder{Embedder: model, vecs: map[string][]float32{}}
	for _, be := range contextBenchBackends {
		b.Run("backend="+be.name, func(b *testing.B) {
			st := be.open(b)
			bulkEntities(b, st.graph, alice.UserID, entities, now)
			saveBenchMemories(b, st.memories, model, bulkMemories(memoryRows, now))
			ids := make([]string, entities)
			for i := range ids {
				ids[i] = fmt.Sprintf("ent_bulk%06d", i)
			}
			if err := st.graph.Update(b.Context(), func(tx *graph.Tx) error { return tx.EnqueueOutbox(b.Context(), alice.UserID, ids, now) }); err != nil {
				b.Fatal(err)
			}
			opts := knowledge.Options{
				Now: func() time.Time { return now }, Profiles: st.control, Contradictions: st.contradictions,
				Memories: st.memories, EntityEmbeddings: st.entityVecs, Embedder: backfillEmbedder,
			}
			backfill := knowledge.NewService(st.graph, schema.NewRegistry(), opts)
			if got, err := backfill.DrainEntityOutbox(b.Context()); err != nil || got.Embedded != entities {
				b.Fatalf("drain: %+v, %v", got, err)
			}
			if st.settle != nil {
				st.settle(b)
			}
			opts.Embedder = model
			svc := knowledge.NewService(st.graph, schema.NewRegistry(), opts)
			if _, _, err := svc.UpdateProfile(b.Context(), alice, map[string]any{"name": "Alice", "city": "Lyon"}, "bench"); err != nil {
				b.Fatal(err)
			}
			// "company detail 42" is a topic every entity's text names a
			// word of, "rocket launch" one that none names, so that the
			// keyword scan reads every candidate's snapshot: the worst
			// case.
			// Each case loads the same context again and again; "after a
			// write" stores an entity before each load (untimed), as an
			// agent that writes between loads does, which a backend's
			// caches must not hide.
			cases := []struct {
				topic string
				write bool
			}{{"", false}, {"company detail 42", false}, {"rocket launch", false}, {"", true}, {"company detail 42", true}}
			for _, tc := range cases {
				topic, name := tc.topic, fmt.Sprintf("topic=%q/embedder=use-lite/embeddings=stored", tc.topic)
				if tc.write {
					name += "/after-a-write"
				}
				b.Run(name, func(b *testing.B) {
					var lat []time.Duration
					n := 0
					for b.Loop() {
						if tc.write {
							n++
							req := knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "note", "title": fmt.Sprintf("bench note %s %d", b.Name(), n)}}}
							if _, err := svc.Store(b.Context(), alice, req); err != nil {
								b.Fatal(err)
							}
						}
						start := time.Now()
						out, err := svc.UserContext(b.Context(), alice, knowledge.ContextRequest{Topic: topic})
						lat = append(lat, time.Since(start))
						if err != nil || out.TokensUsed > out.BudgetTokens || len(out.Entities) == 0 || len(out.Memories.Recent) == 0 {
							b.Fatalf("%v (tokens %d, %d entities, %d memories)", err, out.TokensUsed, len(out.Entities), len(out.Memories.Recent))
						}
					}
					slices.Sort(lat)
					pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
					b.ReportMetric(pct(0.50), "p50-ms")
					b.ReportMetric(pct(0.95), "p95-ms")
				})
			}
		})
	}
}

// contextBenchStores are the stores of one backend that BenchmarkUserContext
// wires a service over, as cmd/cairn wires them.
type contextBenchStores struct {
	graph          *graph.Store
	memories       *vector.Store
	entityVecs     *vector.EntityStore
	control        *controlplane.Store
	contradictions knowledge.ContradictionStore
	// settle does what the server's background maintenance would have
	// done after the bulk load (PostgreSQL: VACUUM ANALYZE).
	settle func(tb testing.TB)
}

var contextBenchBackends = []struct {
	name string
	open func(tb testing.TB) contextBenchStores
}{
	{"embedded", func(tb testing.TB) contextBenchStores {
		db := sqlitetest.Open(tb)
		vd := vembedded.New(db)
		control := controlplane.New(db.Write, migrations.SQLite)
		st := contextBenchStores{graph: graph.NewStore(embedded.New(db)), memories: vector.NewStore(vd), entityVecs: vector.NewEntityStore(vd),
			control: control, contradictions: control.WithReader(db.Read)}
		tb.Cleanup(func() { st.memories.Close(); st.graph.Close() })
		return st
	}},
	{"postgres", func(tb testing.TB) contextBenchStores {
		return benchOnPostgres(tb, func(pg *postgres.DB) graph.Driver { return graphpostgres.New(pg.Pool) })
	}},
	// The split deployment: the graph in Neo4j (a server neo4jtest hands
	// out, emptied), the rest in PostgreSQL, as cmd/cairn wires it.
	{"neo4j", func(tb testing.TB) contextBenchStores {
		srv := neo4jtest.Take(tb)
		return benchOnPostgres(tb, func(*postgres.DB) graph.Driver { return graphneo4j.New(srv.Driver, srv.Config.Database) })
	}},
}

// benchOnPostgres wires memories, entity embeddings and the control plane
// on a fresh PostgreSQL database, and the graph on the driver graphOn
// returns.
func benchOnPostgres(tb testing.TB, graphOn func(pg *postgres.DB) graph.Driver) contextBenchStores {
	pg, err := postgres.Open(tb.Context(), pgtest.URL(tb), postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	vd := pgvector.New(pg.Pool, pgvector.Options{})
	control := controlplane.New(pg.SQL, migrations.Postgres)
	st := contextBenchStores{graph: graph.NewStore(graphOn(pg)), memories: vector.NewStore(vd), entityVecs: vector.NewEntityStore(vd),
		control: control, contradictions: control.WithReader(pg.SQL)}
	st.settle = func(tb testing.TB) {
		if _, err := pg.Pool.Exec(tb.Context(), `VACUUM ANALYZE`); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() { st.memories.Close(); st.graph.Close(); pg.Close() })
	return st
}

// saveBenchMemories stores ms as alice's memories in e's space, with random
// unit vectors.
func saveBenchMemories(tb testing.TB, s *vector.Store, e embed.Embedder, ms memories) {
	tb.Helper()
	space := vector.Space{Embedder: e.Name(), Dimension: e.Dimension()}
	rnd := rand.New(rand.NewPCG(1, 2))
	const batch = 1000
	for lo := 0; lo < len(ms); lo += batch {
		var rows []vector.Memory
		for _, m := range ms[lo:min(lo+batch, len(ms))] {
			v := make([]float32, space.Dimension)
			var norm float64
			for i := range v {
				v[i] = float32(rnd.NormFloat64())
				norm += float64(v[i]) * float64(v[i])
			}
			for i := range v {
				v[i] /= float32(math.Sqrt(norm))
			}
			rows = append(rows, vector.Memory{UserID: alice.UserID, Collection: m.Collection, Title: m.Title, Text: m.Text, CreatedAt: m.CreatedAt, Embedding: v})
		}
		if _, err := s.Save(tb.Context(), space, rows...); err != nil {
			tb.Fatal(err)
		}
	}
}

// memoEmbedder is an embedder that remembers the vectors of the texts it
// embedded: the same vectors, in the same space, computed once.
type memoEmbedder struct {
	embed.Embedder
	mu   sync.Mutex
	vecs map[string][]float32
}

func (m *memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	var missing []string
	for _, t := range texts {
		if _, ok := m.vecs[t]; !ok {
			missing = append(missing, t)
		}
	}
	m.mu.Unlock()
	vecs, err := m.Embedder.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range missing {
		m.vecs[t] = vecs[i]
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = m.vecs[t]
	}
	return out, nil
}
