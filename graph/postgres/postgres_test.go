package postgres_test

import (
	"context"
	"sync/atomic"
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
	db, err := dbpostgres.Open(tb.Context(), url, dbpostgres.Options{})
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close postgres: %v", err)
		}
	})
	return postgres.New(db.Pool)
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

// TestConformanceTwoProcesses runs the suite with every transaction sent to
// one of two drivers in turn, each with its own pool, on one database: what
// two cairn processes do. Their in-process queues know nothing of each
// other, so only the advisory locks keep the concurrent cycle test's graph
// acyclic.
func TestConformanceTwoProcesses(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) *graph.Store {
		url := pgtest.URL(t)
		return graph.NewStore(&twoProcesses{d: [2]graph.Driver{openDriver(t, url), openDriver(t, url)}})
	})
}

// twoProcesses sends each transaction to one of two drivers in turn.
type twoProcesses struct {
	d [2]graph.Driver
	n atomic.Uint64
}

func (p *twoProcesses) next() graph.Driver { return p.d[p.n.Add(1)%2] }

func (p *twoProcesses) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return p.next().Update(ctx, fn)
}

func (p *twoProcesses) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return p.next().View(ctx, fn)
}

func (p *twoProcesses) Close() error { return nil }
