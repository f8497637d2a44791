package embedded_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// BenchmarkReplaceEntityTimelines replaces the timelines of 100 new
// entities, one event each, as a store of 100 does, for a user whose
// timeline holds 60,000 events: the delete must not walk them.
func BenchmarkReplaceEntityTimelines(b *testing.B) {
	s := openStore(b)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := func(prefix string, n, per int) []graph.EntityTimeline {
		var out []graph.EntityTimeline
		for i := range n {
			id := fmt.Sprintf("ent_%s_%06d", prefix, i)
			var evs []graph.TimelineEvent
			for k := range per {
				evs = append(evs, graph.TimelineEvent{ID: fmt.Sprintf("evt_%s_%d_%d", prefix, i, k), EventType: "date", Timestamp: "2026-01-01", Time: t0.Add(time.Duration(i*per+k) * time.Minute), SourceID: "src_x", Properties: map[string]any{}})
			}
			out = append(out, graph.EntityTimeline{EntityID: id, Events: evs})
		}
		return out
	}
	if err := s.Update(b.Context(), func(tx *graph.Tx) error {
		return tx.ReplaceEntityTimelines(context.Background(), "u", tl("old", 20000, 3))
	}); err != nil {
		b.Fatal(err)
	}
	round := 0
	for b.Loop() {
		round++
		if err := s.Update(b.Context(), func(tx *graph.Tx) error {
			return tx.ReplaceEntityTimelines(context.Background(), "u", tl(fmt.Sprint("new", round), 100, 1))
		}); err != nil {
			b.Fatal(err)
		}
	}
}
