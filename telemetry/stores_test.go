package telemetry

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

type compactingGraph struct {
	graph.Driver
	compacted *bool
}

func (c compactingGraph) Compact(context.Context) error { *c.compacted = true; return nil }

type compactingMemories struct {
	MemoryDriver
	compacted *bool
}

func (c compactingMemories) Compact(context.Context) error { *c.compacted = true; return nil }

// TestTracingKeepsCompaction: an erasure compacts the stores' files after
// it; tracing the drivers must not drop that.
func TestTracingKeepsCompaction(t *testing.T) {
	var g, m bool
	if err := graph.NewStore(TraceGraph(compactingGraph{compacted: &g}, Off())).Compact(t.Context()); err != nil || !g {
		t.Errorf("graph compaction through tracing: ran %v, %v", g, err)
	}
	if err := vector.NewStore(TraceMemories(compactingMemories{compacted: &m}, Off())).Compact(t.Context()); err != nil || !m {
		t.Errorf("memory compaction through tracing: ran %v, %v", m, err)
	}
}
