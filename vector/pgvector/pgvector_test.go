package pgvector_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/pgvector"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// openDB opens a fresh PostgreSQL schema, closed when the test ends. The
// stores opened on it close first: cleanups run last in, first out.
func openDB(t *testing.T) *postgres.DB {
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
	return db
}

// opener returns a harness that opens a store on a fresh PostgreSQL schema.
func opener(opts pgvector.Options) func(t *testing.T) *vector.Store {
	return func(t *testing.T) *vector.Store {
		t.Helper()
		s := vector.NewStore(pgvector.New(openDB(t).Pool, opts))
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close memories: %v", err)
			}
		})
		return s
	}
}

// openEntities opens a fresh PostgreSQL schema with its entity embeddings.
func openEntities(t *testing.T) (*vector.Store, *vector.EntityStore) {
	t.Helper()
	d := pgvector.New(openDB(t).Pool, pgvector.Options{})
	return vector.NewStore(d), vector.NewEntityStore(d)
}

// openErasable opens a fresh PostgreSQL schema's entity embeddings, and
// records erasures in it.
func openErasable(t *testing.T) (*vector.EntityStore, func(t *testing.T, userID string)) {
	t.Helper()
	db := openDB(t)
	return vector.NewEntityStore(pgvector.New(db.Pool, pgvector.Options{})), func(t *testing.T, userID string) {
		if _, err := db.Pool.Exec(t.Context(), `INSERT INTO user_erasures (id, user_id, status, phase, actor, started_at, updated_at)
			VALUES ('era_1', $1, 'running', 'entities', 'test', 1, 1)`, userID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConformance runs the suite with every search scanning exactly, so
// that rankings are compared with the oracle's exactly.
func TestConformance(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{ExactBelow: 1 << 30}), OpenEntities: openEntities, OpenErasable: openErasable})
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
// builds the HNSW index in bulk, and reports p50/p95 search latency,
// recall@10 against exact search and the share of short results, for
// each filter of vectortest.BenchFilters, vector-only and hybrid, on
// clustered and on uniform vectors (see vectortest.Bench):
//
//	go test ./vector/pgvector -run '^$' -bench Search -benchtime 200x -timeout 60m
//
// Each data set gets a schema of its own; loading and indexing it take a
// few minutes on 2 cores (the log says how long).
func BenchmarkSearch(b *testing.B) {
	for _, data := range []vectortest.BenchData{vectortest.Clustered, vectortest.Uniform} {
		b.Run(string(data), func(b *testing.B) { benchSearch(b, data) })
	}
}

func benchSearch(b *testing.B, data vectortest.BenchData) {
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
	if _, err := db.Pool.Exec(b.Context(), `DROP INDEX `+pgvector.IndexName(384)); err != nil {
		b.Fatal(err)
	}
	searchers := []vectortest.Searcher{
		{Name: "default", Store: vector.NewStore(pgvector.New(db.Pool, pgvector.Options{}))},
		// The index alone: neither the exact scan of selective filters nor
		// the exact scan of answers from featureless neighbourhoods, to show
		// what they buy.
		{Name: "index_only", Store: vector.NewStore(pgvector.New(db.Pool, pgvector.Options{ExactBelow: -1, MaxLID: -1}))},
	}
	vectortest.Bench(b, vector.NewStore(pgvector.New(db.Pool, pgvector.Options{})), vectortest.BenchConfig{
		Data:      data,
		Searchers: searchers,
		AfterLoad: func(b *testing.B) {
			conn, err := db.Pool.Acquire(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Release()
			for _, sql := range []string{
				`SET maintenance_work_mem = '1GB'`,
				pgvector.IndexStatement(384),
				`RESET maintenance_work_mem`,
				// What autovacuum would have done by the time a real
				// table is queried: statistics and the visibility map.
				`VACUUM ANALYZE memories`,
			} {
				if _, err := conn.Exec(b.Context(), sql); err != nil {
					b.Fatalf("%s: %v", sql, err)
				}
			}
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
