package embedded_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// harness opens a fresh embedded store in the test's temporary directory.
func harness(t *testing.T) *graph.Store { return openStore(t) }

// openStore opens a fresh embedded store in tb's temporary directory.
func openStore(tb testing.TB) *graph.Store {
	tb.Helper()
	s := graph.NewStore(embedded.New(sqlitetest.Open(tb)))
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close graph: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, harness) }

func TestTextSigBackfill(t *testing.T) {
	db := sqlitetest.Open(t)
	graphtest.TextSigBackfill(t, embedded.New(db), func(t *testing.T) {
		if _, err := db.Write.ExecContext(t.Context(), `UPDATE entities SET text_sig = NULL`); err != nil {
			t.Fatal(err)
		}
	})
}
