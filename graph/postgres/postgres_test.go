package postgres_test

import (
	"testing"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	"github.com/cairnkg/cairn/graph/postgres"
)

// newDriver opens a migrated PostgreSQL database in a schema of the test's
// own and returns a graph driver on it.
func newDriver(tb testing.TB) graph.Driver {
	tb.Helper()
	return openDriver(tb, pgtest.URL(tb))
}

// openDriver opens the database at url with a pool of its own.
func openDriver(tb testing.TB, url string) graph.Driver {
	tb.Helper()
	return postgres.New(openDB(tb, url).Pool)
}

// openDB opens and migrates the database at url, and closes it when the
// test ends.
func openDB(tb testing.TB, url string) *dbpostgres.DB {
	tb.Helper()
	db, err := dbpostgres.Open(tb.Context(), url, dbpostgres.Options{})
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close postgres: %v", err)
		}
	})
	return db
}

func harness(t *testing.T) *graph.Store {
	t.Helper()
	s := graph.NewStore(newDriver(t))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close graph: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, harness) }

func TestTextSigBackfill(t *testing.T) {
	db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	graphtest.TextSigBackfill(t, postgres.New(db.Pool), func(t *testing.T) {
		if _, err := db.Pool.Exec(t.Context(), `UPDATE entities SET text_sig = NULL`); err != nil {
			t.Fatal(err)
		}
	})
}
