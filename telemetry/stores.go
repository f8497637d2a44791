package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// The database spans are one per transaction or store call, not one per
// statement: enough to see where a tool call's time goes without the cost
// (and the volume) of tracing every query.

// TraceGraph returns d with each transaction (Update, View) and outbox call
// traced as a span ("graph.update", "graph.view", "graph.outbox.claim"…).
// The transactions it hands out are d's own, so optional capabilities of
// the driver's transactions (graph.Reacher) are kept.
func TraceGraph(d graph.Driver, tracing *Tracing) graph.Driver {
	return &tracedGraph{Driver: d, tracer: tracing.Tracer()}
}

type tracedGraph struct {
	graph.Driver
	tracer trace.Tracer
}

// span runs fn in a span named name, marking it failed when fn fails.
func span(ctx context.Context, tracer trace.Tracer, name string, fn func(context.Context) error) error {
	ctx, s := tracer.Start(ctx, name)
	err := fn(ctx)
	if err != nil {
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
	return err
}

func (g *tracedGraph) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return span(ctx, g.tracer, "graph.update", func(ctx context.Context) error { return g.Driver.Update(ctx, fn) })
}

func (g *tracedGraph) View(ctx context.Context, fn func(graph.DriverTx) error) error {
	return span(ctx, g.tracer, "graph.view", func(ctx context.Context) error { return g.Driver.View(ctx, fn) })
}

func (g *tracedGraph) ClaimOutbox(ctx context.Context, c graph.OutboxClaim) (out []graph.OutboxEntry, err error) {
	err = span(ctx, g.tracer, "graph.outbox.claim", func(ctx context.Context) (err error) {
		out, err = g.Driver.ClaimOutbox(ctx, c)
		return err
	})
	return out, err
}

func (g *tracedGraph) AckOutbox(ctx context.Context, entries []graph.OutboxEntry) error {
	return span(ctx, g.tracer, "graph.outbox.ack", func(ctx context.Context) error { return g.Driver.AckOutbox(ctx, entries) })
}

// Compact implements graph.Compactor when the traced driver does: an
// erasure's compaction must not be lost to tracing.
func (g *tracedGraph) Compact(ctx context.Context) error {
	c, ok := g.Driver.(graph.Compactor)
	if !ok {
		return nil
	}
	return span(ctx, g.tracer, "graph.compact", c.Compact)
}

// MemoryDriver is a backend that keeps memories and entity embeddings, as
// vector/embedded and vector/pgvector do.
type MemoryDriver interface {
	vector.Driver
	vector.EntityDriver
}

// TraceMemories returns d with each store call that reads or writes
// memories or entity embeddings traced as a span ("memories.insert",
// "memories.nearest", "entity_embeddings.get"…). Calls of maintenance
// commands (AllCollections, Replace…) pass through untraced.
func TraceMemories(d MemoryDriver, tracing *Tracing) MemoryDriver {
	return &tracedMemories{MemoryDriver: d, tracer: tracing.Tracer()}
}

type tracedMemories struct {
	MemoryDriver
	tracer trace.Tracer
}

func (m *tracedMemories) Spaces(ctx context.Context, userID string, collections []string) (out map[string]vector.Space, err error) {
	err = span(ctx, m.tracer, "memories.spaces", func(ctx context.Context) (err error) {
		out, err = m.MemoryDriver.Spaces(ctx, userID, collections)
		return err
	})
	return out, err
}

func (m *tracedMemories) Insert(ctx context.Context, ms []vector.Memory) error {
	return span(ctx, m.tracer, "memories.insert", func(ctx context.Context) error { return m.MemoryDriver.Insert(ctx, ms) })
}

func (m *tracedMemories) Get(ctx context.Context, userID string, ids []string) (out []vector.Memory, err error) {
	err = span(ctx, m.tracer, "memories.get", func(ctx context.Context) (err error) {
		out, err = m.MemoryDriver.Get(ctx, userID, ids)
		return err
	})
	return out, err
}

func (m *tracedMemories) Nearest(ctx context.Context, q vector.VectorQuery) (out []vector.Scored, err error) {
	err = span(ctx, m.tracer, "memories.nearest", func(ctx context.Context) (err error) {
		out, err = m.MemoryDriver.Nearest(ctx, q)
		return err
	})
	return out, err
}

func (m *tracedMemories) MatchText(ctx context.Context, q vector.TextQuery) (out []vector.Scored, err error) {
	err = span(ctx, m.tracer, "memories.match_text", func(ctx context.Context) (err error) {
		out, err = m.MemoryDriver.MatchText(ctx, q)
		return err
	})
	return out, err
}

func (m *tracedMemories) List(ctx context.Context, q vector.ListQuery) (out []vector.Memory, total int, err error) {
	err = span(ctx, m.tracer, "memories.list", func(ctx context.Context) (err error) {
		out, total, err = m.MemoryDriver.List(ctx, q)
		return err
	})
	return out, total, err
}

func (m *tracedMemories) PutEntityEmbeddings(ctx context.Context, es []vector.EntityEmbedding) error {
	return span(ctx, m.tracer, "entity_embeddings.put", func(ctx context.Context) error { return m.MemoryDriver.PutEntityEmbeddings(ctx, es) })
}

func (m *tracedMemories) EntityEmbeddings(ctx context.Context, userID string, ids []string) (out []vector.EntityEmbedding, err error) {
	err = span(ctx, m.tracer, "entity_embeddings.get", func(ctx context.Context) (err error) {
		out, err = m.MemoryDriver.EntityEmbeddings(ctx, userID, ids)
		return err
	})
	return out, err
}

// Compact implements vector.Compactor when the traced driver does (an
// erasure's compaction), untraced like the other maintenance calls.
func (m *tracedMemories) Compact(ctx context.Context) error {
	if c, ok := m.MemoryDriver.(vector.Compactor); ok {
		return c.Compact(ctx)
	}
	return nil
}
