package neo4j_test

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// TestTypeCacheFollowsWrites holds the driver's cache of entity types and
// their counts (typecache.go) to what the server holds, on a live server:
// two Drivers on one database are two processes, each with its cache; a
// type that one writes, merges away or erases, the other lists (and
// counts) at its next read, whatever it cached before; and a write
// transaction that rolls back leaves nothing behind.
func TestTypeCacheFollowsWrites(t *testing.T) {
	srv := take(t)
	one := graphneo4j.New(srv.Driver, srv.Config.Database)
	other := graphneo4j.New(srv.Driver, srv.Config.Database)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ent := func(id, typ string) graph.Entity {
		return graph.Entity{ID: id, UserID: "alice", Type: typ, CanonicalName: id, SchemaVersion: "1.0",
			ObservationCount: 1, LastObservationAt: at, CreatedAt: at, ComputedAt: at}
	}
	put := func(d *graphneo4j.Driver, es ...graph.Entity) {
		t.Helper()
		if err := d.Update(t.Context(), func(tx graph.DriverTx) error { return tx.PutEntities(t.Context(), es) }); err != nil {
			t.Fatal(err)
		}
	}
	// check reads the types and counts through d twice (the second from
	// its cache when the version held), in either order.
	check := func(d *graphneo4j.Driver, want map[string]int) {
		t.Helper()
		for i := range 4 {
			var types []string
			var counts map[string]int
			err := d.View(t.Context(), func(tx graph.DriverTx) error {
				var err error
				if i%2 == 0 {
					if types, err = tx.EntityTypes(t.Context(), "alice"); err == nil {
						counts, err = tx.EntityTypeCounts(t.Context(), "alice")
					}
				} else if counts, err = tx.EntityTypeCounts(t.Context(), "alice"); err == nil {
					types, err = tx.EntityTypes(t.Context(), "alice")
				}
				return err
			})
			if err != nil || !slices.Equal(types, slices.Sorted(maps.Keys(want))) || !maps.Equal(counts, want) {
				t.Fatalf("read %d: types %v, counts %v, %v; want %v", i, types, counts, err, want)
			}
		}
	}
	check(one, map[string]int{})
	put(one, ent("ent_a1", "person"))
	check(one, map[string]int{"person": 1})
	check(other, map[string]int{"person": 1})

	put(other, ent("ent_a2", "company"), ent("ent_a3", "person"))
	check(one, map[string]int{"person": 2, "company": 1})

	merged := ent("ent_a2", "company")
	merged.MergedInto = "ent_a1"
	put(one, merged)
	check(other, map[string]int{"person": 2})
	check(one, map[string]int{"person": 2})

	// A write that rolls back changes nothing.
	rollback := errors.New("rollback")
	if err := other.Update(t.Context(), func(tx graph.DriverTx) error {
		if err := tx.PutEntities(t.Context(), []graph.Entity{ent("ent_a4", "invoice")}); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	check(one, map[string]int{"person": 2})

	if err := other.Update(t.Context(), func(tx graph.DriverTx) error {
		_, err := tx.(graph.Eraser).Erase(t.Context(), graph.Erasure{UserID: "alice", EntityIDs: []string{"ent_a3"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check(one, map[string]int{"person": 1})
}
