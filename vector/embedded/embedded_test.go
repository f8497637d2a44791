package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/vectortest"
)

// open opens a fresh embedded store in the test's temporary directory.
func open(t *testing.T) *vector.Store {
	t.Helper()
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	s := vector.NewStore(embedded.New(db))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close memories: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { vectortest.Run(t, vectortest.Harness{Open: open}) }

// BenchmarkSearch loads 100,000 memories of 384 dimensions and reports
// p50/p95 search latency and recall@10 (exact scan: 1 by construction):
//
//	go test ./vector/embedded -run '^$' -bench Search -benchtime 200x
func BenchmarkSearch(b *testing.B) {
	db, err := sqlite.OpenFile(b.Context(), filepath.Join(b.TempDir(), "cairn.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := vector.NewStore(embedded.New(db))
	defer s.Close()
	vectortest.Bench(b, s, vectortest.BenchConfig{})
}
