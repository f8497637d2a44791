package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
)

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

func (p *twoProcesses) ClaimOutbox(ctx context.Context, c graph.OutboxClaim) ([]graph.OutboxEntry, error) {
	return p.next().ClaimOutbox(ctx, c)
}

func (p *twoProcesses) AckOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	return p.next().AckOutbox(ctx, entries)
}

func (p *twoProcesses) ReleaseOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	return p.next().ReleaseOutbox(ctx, entries)
}

func (p *twoProcesses) Close() error { return nil }
