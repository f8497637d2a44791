package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// harness opens a fresh embedded store in the test's temporary directory.
func harness(t *testing.T) *graph.Store { return openStore(t) }

// openStore opens a fresh embedded store in tb's temporary directory.
func openStore(tb testing.TB) *graph.Store {
	tb.Helper()
	db, err := sqlite.OpenFile(tb.Context(), filepath.Join(tb.TempDir(), "cairn.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	s := graph.NewStore(embedded.New(db))
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close graph: %v", err)
		}
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, harness) }

func TestTextSigBackfill(t *testing.T) {
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	graphtest.TextSigBackfill(t, embedded.New(db), func(t *testing.T) {
		if _, err := db.Write.ExecContext(t.Context(), `UPDATE entities SET text_sig = NULL`); err != nil {
			t.Fatal(err)
		}
	})
}
