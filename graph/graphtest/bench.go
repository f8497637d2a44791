package graphtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// BenchmarkListEntityStats lists the statistics of 10,000 entities with
// their degrees, as a context load does: with 3,333 live relationships
// among them and text signatures (a load with a topic), then with 20,000
// relationships, with and without signatures (as cairn bench's store has
// when it loads context). settle, if not nil, runs after each load and
// before the timing: what the backend's own maintenance would have done by
// then (PostgreSQL: VACUUM ANALYZE, without which no scan is index-only).
func BenchmarkListEntityStats(b *testing.B, s *graph.Store, settle func(b *testing.B)) {
	const n = 10000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	types := []string{"person", "company", "project"}
	ids := make([]string, n)
	err := s.Update(b.Context(), func(tx *graph.Tx) error {
		var es []graph.Entity
		for i := range n {
			last := t0.Add(time.Duration(i) * time.Minute)
			id := fmt.Sprintf("ent_%06d", i*7919%n)
			ids[i] = id
			es = append(es, graph.Entity{ID: id, UserID: "u", Type: types[i%3], CanonicalName: fmt.Sprint("name ", i), SchemaVersion: "1.0",
				Snapshot:   map[string]any{"name": fmt.Sprint("name ", i), "company": "Acme", "title": "engineer", "notes": fmt.Sprint("note ", i)},
				Provenance: map[string]string{"name": "obs"}, ObservationCount: 1 + i%5, LastObservationAt: last, CreatedAt: last, ComputedAt: last})
		}
		return tx.PutEntities(context.Background(), es)
	})
	if err != nil {
		b.Fatal(err)
	}
	// relate adds live relationships until there are want, each from
	// the next entity to a scattered one.
	made := 0
	relate := func(want int) {
		var rs []graph.Relationship
		for k := made; k < want; k++ {
			i := k * 3 % n
			rs = append(rs, graph.Relationship{ID: fmt.Sprint("rel_", k), UserID: "u", Type: "REFERS_TO", SourceEntityID: ids[i],
				TargetEntityID: ids[(i*31+7+k/n)%n], Metadata: map[string]any{}, Provenance: map[string]string{}, ObservationCount: 1,
				CreatedAt: t0, LastObservationAt: t0})
		}
		if err := s.Update(b.Context(), func(tx *graph.Tx) error { return tx.PutRelationships(context.Background(), rs) }); err != nil {
			b.Fatal(err)
		}
		made = want
		if settle != nil {
			settle(b)
		}
	}
	list := func(sigs bool) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				err := s.View(b.Context(), func(tx *graph.Tx) error {
					stats, err := tx.ListEntityStats(b.Context(), graph.EntityFilter{UserID: "u", Page: graph.Page{Limit: 20000}, TextSigs: sigs})
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
	}
	relate(3334)
	b.Run("relationships=3334/signatures", list(true))
	relate(20000)
	b.Run("relationships=20000/signatures", list(true))
	b.Run("relationships=20000", list(false))
}
