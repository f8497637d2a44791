package pgvector_test

import (
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

// TestConformance runs the suite with the default options: the suite's
// data sets are small, so searches scan exactly.
func TestConformance(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{})})
}

// TestConformanceIndexed forces every search through the HNSW index, so
// that iterative scans and the fallback to an exact scan are exercised.
func TestConformanceIndexed(t *testing.T) {
	vectortest.Run(t, vectortest.Harness{Open: opener(pgvector.Options{ExactBelow: -1}), Approximate: true})
}
