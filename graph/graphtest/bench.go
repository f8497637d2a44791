package graphtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// BenchmarkListEntityStats lists the statistics of 10,000 entities with
// 3,333 live relationships among them, text signatures included, as a
// context load with a topic does. settle, if not nil, runs after the load
// and before the timing: what the backend's own maintenance would have done
// by then (PostgreSQL: VACUUM ANALYZE, without which no scan is index-only).
func BenchmarkListEntityStats(b *testing.B, s *graph.Store, settle func(b *testing.B)) {
	const n = 10000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	types := []string{"person", "company", "project"}
	err := s.Update(b.Context(), func(tx *graph.Tx) error {
		var es []graph.Entity
		for i := range n {
			last := t0.Add(time.Duration(i) * time.Minute)
			id := fmt.Sprintf("ent_%06d", i*7919%n)
			es = append(es, graph.Entity{ID: id, UserID: "u", Type: types[i%3], CanonicalName: fmt.Sprint("name ", i), SchemaVersion: "1.0",
				Snapshot:   map[string]any{"name": fmt.Sprint("name ", i), "company": "Acme", "title": "engineer", "notes": fmt.Sprint("note ", i)},
				Provenance: map[string]string{"name": "obs"}, ObservationCount: 1 + i%5, LastObservationAt: last, CreatedAt: last, ComputedAt: last})
		}
		if err := tx.PutEntities(context.Background(), es); err != nil {
			return err
		}
		var rs []graph.Relationship
		for i := 0; i < n; i += 3 {
			rs = append(rs, graph.Relationship{ID: fmt.Sprint("rel_", i), UserID: "u", Type: "REFERS_TO", SourceEntityID: es[i].ID,
				TargetEntityID: es[(i*31+7)%n].ID, Metadata: map[string]any{}, Provenance: map[string]string{}, ObservationCount: 1,
				CreatedAt: t0, LastObservationAt: t0})
		}
		return tx.PutRelationships(context.Background(), rs)
	})
	if err != nil {
		b.Fatal(err)
	}
	if settle != nil {
		settle(b)
	}
	for b.Loop() {
		err := s.View(b.Context(), func(tx *graph.Tx) error {
			stats, err := tx.ListEntityStats(b.Context(), graph.EntityFilter{UserID: "u", Page: graph.Page{Limit: 20000}, TextSigs: true})
			if len(stats) != n {
				return fmt.Errorf("%d stats", len(stats))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
