package embedded_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// open opens a fresh embedded store in the test's temporary directory.
func open(t *testing.T) *vector.Store { return openStore(t) }

// openStore opens a fresh embedded store in tb's temporary directory.
func openStore(tb testing.TB) *vector.Store {
	tb.Helper()
	s := vector.NewStore(embedded.New(sqlitetest.Open(tb)))
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close memories: %v", err)
		}
	})
	return s
}

// openEntities opens a fresh embedded store with its entity embeddings.
func openEntities(t *testing.T) (*vector.Store, *vector.EntityStore) {
	t.Helper()
	d := embedded.New(sqlitetest.Open(t))
	return vector.NewStore(d), vector.NewEntityStore(d)
}

// openErasable opens a fresh embedded store's entity embeddings, and
// records erasures in its database.
func openErasable(t *testing.T) (*vector.EntityStore, func(t *testing.T, userID string)) {
	db := sqlitetest.Open(t)
	return vector.NewEntityStore(embedded.New(db)), func(t *testing.T, userID string) {
		if _, err := db.Write.ExecContext(t.Context(), `INSERT INTO user_erasures (id, user_id, status, phase, actor, started_at, updated_at)
			VALUES ('era_1', ?, 'running', 'entities', 'test', 1, 1)`, userID); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConformance(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: open, OpenEntities: openEntities, OpenErasable: openErasable})
}

// BenchmarkSearch loads 100,000 memories of 384 dimensions and reports
// p50/p95 search latency, recall@10 (exact scan: 1 by construction) and
// the share of short results, on clustered and on uniform vectors, for
// each filter of vectortest.BenchFilters, vector-only and hybrid:
//
//	go test ./vector/embedded -run '^$' -bench Search -benchtime 200x -timeout 30m
func BenchmarkSearch(b *testing.B) {
	for _, data := range []vectortest.BenchData{vectortest.Clustered, vectortest.Uniform} {
		b.Run(string(data), func(b *testing.B) {
			vectortest.Bench(b, openStore(b), vectortest.BenchConfig{Data: data})
		})
	}
}

// FuzzSearchText checks that no query text, however odd, breaks the FTS5
// query built from it (quotes, operators, NEAR, column filters, …).
func FuzzSearchText(f *testing.F) {
	for _, s := range []string{`"`, `a OR b`, `NEAR(a b)`, `title:x`, `*`, `^a`, `a AND NOT b`, "é ñ 中文", `'); DROP TABLE memories; --`} {
		f.Add(s)
	}
	s := vector.NewStore(embedded.New(sqlitetest.Open(f)))
	space := vector.Space{Embedder: "test", Dimension: 4}
	if _, err := s.Save(f.Context(), space, vector.Memory{UserID: "u", Collection: "c", Text: "a quoted \"phrase\" and NEAR words", Embedding: []float32{1, 0, 0, 0}}); err != nil {
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
