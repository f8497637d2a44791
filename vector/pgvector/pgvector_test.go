package pgvector_test

import (
	"fmt"
	"time"

	"testing"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/pgvector"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// opener returns a harness that opens a store on a fresh PostgreSQL schema.
func opener(opts pgvector.Options) func(t *testing.T) *vector.Store {
	return func(t *testing.T) *vector.Store {
		t.Helper()
		db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		s := vector.NewStore(pgvector.New(db.Pool, opts))
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close memories: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Errorf("close postgres: %v", err)
			}
		})
		return s
	}
}

// openEntities opens a fresh PostgreSQL schema with its entity embeddings.
func openEntities(t *testing.T) (*vector.Store, *vector.EntityStore) {
	t.Helper()
	db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close postgres: %v", err)
		}
	})
	d := pgvector.New(db.Pool, pgvector.Options{})
	return vector.NewStore(d), vector.NewEntityStore(d)
}

// TestConformance runs the suite with every search scanning exactly, so
// that rankings are compared with the oracle's exactly.
func TestConformance(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{ExactBelow: 1 << 30}), OpenEntities: openEntities})
}

// TestConformanceDefaults runs it with the default options, under which
// the suite's larger searches use the index.
func TestConformanceDefaults(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{}), Approximate: true})
}

// TestConformanceIndexed forces every search through the HNSW index, so
// that iterative scans and the fallback to an exact scan are exercised.
func TestConformanceIndexed(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{ExactBelow: -1}), Approximate: true})
}

// BenchmarkSearch loads 100,000 memories of 384 dimensions with COPY,
// builds the HNSW index in bulk, and reports p50/p95 search latency and
// recall@10 against exact search for several hnsw.ef_search values:
//
//	go test ./vector/pgvector -run '^$' -bench Search -benchtime 200x
func BenchmarkSearch(b *testing.B) {
	db, err := postgres.Open(b.Context(), pgtest.URL(b), postgres.Options{})
	if err != nil {
		b.Fatalf("open postgres: %v", err)
	}
	defer db.Close()
	// Loading into an empty table and then building the index is much
	// faster than inserting into the graph row by row. Recording the space
	// first keeps Save from creating the index again.
	if _, err := pgvector.New(db.Pool, pgvector.Options{}).CreateSpace(b.Context(), vectortest.BenchUser, vectortest.BenchCollection,
		vectortest.BenchSpace(384)); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Pool.Exec(b.Context(), `DROP INDEX memories_hnsw_384`); err != nil {
		b.Fatal(err)
	}
	var searchers []vectortest.Searcher
	for _, ef := range []int{40, 100, 200} {
		searchers = append(searchers, vectortest.Searcher{
			Name:    fmt.Sprintf("ef_search=%d", ef),
			Store:   vector.NewStore(pgvector.New(db.Pool, pgvector.Options{EfSearch: ef})),
			Metrics: map[string]float64{"ef_search": float64(ef)},
		})
	}
	// The same with the exact fallback for selective filters turned off,
	// to show what it buys.
	searchers = append(searchers, vectortest.Searcher{
		Name:    "ef_search=100,index_only",
		Store:   vector.NewStore(pgvector.New(db.Pool, pgvector.Options{EfSearch: 100, ExactBelow: -1})),
		Metrics: map[string]float64{"ef_search": 100},
	})
	vectortest.Bench(b, vector.NewStore(pgvector.New(db.Pool, pgvector.Options{})), vectortest.BenchConfig{
		Searchers: searchers,
		AfterLoad: func(b *testing.B) {
			start := time.Now()
			conn, err := db.Pool.Acquire(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Release()
			for _, sql := range []string{
				`SET maintenance_work_mem = '1GB'`,
				`CREATE INDEX memories_hnsw_384 ON memories USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dimension = 384`,
				`RESET maintenance_work_mem`,
				// What autovacuum would have done by the time a real
				// table is queried: statistics and the visibility map.
				`VACUUM ANALYZE memories`,
			} {
				if _, err := conn.Exec(b.Context(), sql); err != nil {
					b.Fatalf("%s: %v", sql, err)
				}
			}
			b.Logf("built the HNSW index (m=16, ef_construction=64) in %s", time.Since(start).Round(time.Millisecond))
		},
	})
}

// FuzzSearchText checks that no query text, however odd, breaks the
// tsquery built from it.
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{`'`, `a | b`, `a & !b`, `a:*`, `(a`, `a <-> b`, "é ñ 中文 ١٢٣", `'); DROP TABLE memories; --`} {
		f.Add(s)
	}
	db, err := postgres.Open(f.Context(), pgtest.URL(f), postgres.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	s := vector.NewStore(pgvector.New(db.Pool, pgvector.Options{}))
	space := vector.Space{Embedder: "test", Dimension: 4}
	if _, err := s.Save(f.Context(), space, vector.Memory{UserID: "u", Collection: "c", Text: "a quoted 'phrase' & words", Embedding: []float32{1, 0, 0, 0}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, err := s.Search(t.Context(), vector.Query{
			Filter: vector.Filter{UserID: "u", Collections: []string{"c"}, Keywords: vector.Terms(text)},
			Text:   text, Vector: []float32{0, 1, 0, 0}, Space: space,
		})
		if err != nil {
			t.Fatalf("search %q: %v", text, err)
		}
	})
}
