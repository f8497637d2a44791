package neo4j_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// TestStatsCacheFollowsWrites holds the driver's cache of entity
// statistics (statscache.go) to what the server holds, on a live server:
// two Drivers on one database are two processes, each with its cache; what
// one writes, the other lists at its next read, whatever it cached before,
// including after the database is emptied and written again as often (the
// write count repeats, the lock node's epoch does not), and a write
// transaction that rolls back leaves nothing behind in the cache.
func TestStatsCacheFollowsWrites(t *testing.T) {
	srv := take(t)
	one := graphneo4j.New(srv.Driver, srv.Config.Database)
	other := graphneo4j.New(srv.Driver, srv.Config.Database)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ent := func(id string, minutes int) graph.Entity {
		return graph.Entity{ID: id, UserID: "alice", Type: "person", CanonicalName: id, SchemaVersion: "1.0",
			ObservationCount: 1, LastObservationAt: at.Add(time.Duration(minutes) * time.Minute), CreatedAt: at, ComputedAt: at}
	}
	put := func(d *graphneo4j.Driver, es ...graph.Entity) {
		t.Helper()
		if err := d.Update(t.Context(), func(tx graph.DriverTx) error { return tx.PutEntities(t.Context(), es) }); err != nil {
			t.Fatal(err)
		}
	}
	// page reads the first limit entities through d twice (the second
	// from its cache when the version held) and checks both against want:
	// ids, newest first, with their degrees.
	page := func(d *graphneo4j.Driver, limit int, want ...string) {
		t.Helper()
		for range 2 {
			var got []string
			err := d.View(t.Context(), func(tx graph.DriverTx) error {
				stats, err := tx.ListEntityStats(t.Context(), graph.EntityFilter{UserID: "alice", Page: graph.Page{Limit: limit}})
				for _, s := range stats {
					id := s.ID
					for _, dg := range s.Degrees {
						id += "+" + dg.Type
					}
					got = append(got, id)
				}
				return err
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("ListEntityStats (limit %d) = %v, %v; want %v", limit, got, err, want)
			}
		}
	}
	list := func(d *graphneo4j.Driver, want ...string) { t.Helper(); page(d, 100, want...) }

	put(one, ent("ent_a", 1))
	list(one, "ent_a")
	list(other, "ent_a")
	put(other, ent("ent_b", 2))
	list(one, "ent_b", "ent_a")
	// A relationship changes degrees, not the entities.
	err := other.Update(t.Context(), func(tx graph.DriverTx) error {
		return tx.PutRelationships(t.Context(), []graph.Relationship{{ID: "rel_1", UserID: "alice", Type: "REFERS_TO",
			SourceEntityID: "ent_a", TargetEntityID: "ent_b", ObservationCount: 1, CreatedAt: at, LastObservationAt: at}})
	})
	if err != nil {
		t.Fatal(err)
	}
	list(one, "ent_b+person", "ent_a+person")

	// A write transaction sees its own writes, and its rollback leaves the
	// cache as it was.
	rollback := errors.New("rollback")
	err = one.Update(t.Context(), func(tx graph.DriverTx) error {
		if err := tx.PutEntities(t.Context(), []graph.Entity{ent("ent_c", 3)}); err != nil {
			return err
		}
		stats, err := tx.ListEntityStats(t.Context(), graph.EntityFilter{UserID: "alice", WithoutDegrees: true})
		if err != nil || len(stats) != 3 {
			t.Errorf("inside the write: %d entities, %v; want 3", len(stats), err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	list(one, "ent_b+person", "ent_a+person")

	// A full page caught up: an entity written since comes first; an
	// entity merged since leaves a gap that only the server can fill.
	page(one, 2, "ent_b+person", "ent_a+person")
	put(other, ent("ent_c", 3))
	page(one, 2, "ent_c", "ent_b+person")
	list(one, "ent_c", "ent_b+person", "ent_a+person")
	merged := ent("ent_b", 4)
	merged.MergedInto = "ent_c"
	put(other, merged)
	page(one, 2, "ent_c", "ent_a+person")
	list(one, "ent_c", "ent_a+person")

	// Emptied and written again, once more often than before (five
	// transactions committed before): the counts go on past the one cached,
	// under a new epoch, which alone tells that the cache holds nothing of
	// this database.
	if _, err := graphneo4j.ClearDatabase(t.Context(), srv.Driver, srv.Config.Database); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 6 {
		id := fmt.Sprintf("ent_x%d", i)
		put(other, ent(id, 10+i))
		want = append([]string{id}, want...)
	}
	list(one, want...)
}
