package knowledge

import (
	"testing"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
)

// GraphBackend opens a fresh graph store of one backend for a test.
type GraphBackend struct {
	Name string
	Open func(t testing.TB) *graph.Store
}

// GraphBackends are the graph stores the equivalence tests of this package
// (internal and external) run on; PostgreSQL skips without
// CAIRN_TEST_DATABASE_URL.
var GraphBackends = []GraphBackend{
	{"embedded", func(t testing.TB) *graph.Store {
		db := sqlitetest.Open(t)
		g := graph.NewStore(embedded.New(db))
		t.Cleanup(func() { g.Close() })
		return g
	}},
	{"postgres", func(t testing.TB) *graph.Store {
		db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := graph.NewStore(graphpostgres.New(db.Pool))
		t.Cleanup(func() { g.Close(); db.Close() })
		return g
	}},
}
