package postgres_test

import (
	"testing"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	"github.com/cairnkg/cairn/graph/postgres"
)

// harness opens a migrated PostgreSQL database in a schema of the test's
// own and returns a graph store on it.
func harness(t *testing.T) *graph.Store {
	t.Helper()
	db, err := dbpostgres.Open(t.Context(), pgtest.URL(t), dbpostgres.Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	s := graph.NewStore(postgres.New(db.Pool))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close graph: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close postgres: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, harness) }
