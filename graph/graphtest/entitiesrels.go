package graphtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// testRelationshipsOfEntities checks Tx.RelationshipsOfEntities on a small
// graph whose answers are written out, on every driver; then, on a driver
// with the optional graph.EntitiesRelationshipsLister, that it gives
// exactly what the portable Tx.RelationshipsOfEntitiesByEntity (one
// ListRelationships an entity: the oracle) gives on a random graph with
// self-loops, ended edges, ties in creation time and several entity types,
// for lists of entities with repeats and unknown ids, sets of readable
// types, and caps.
func testRelationshipsOfEntities(t *testing.T, newStore Harness) {
	ctx := t.Context()
	s := newStore(t)
	const user = "alice"
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(tx *graph.Tx, id, typ string) error {
		return tx.PutEntity(ctx, plainEntity(user, id, typ, epoch))
	}
	link := func(tx *graph.Tx, typ, src, dst string, created, ended time.Time) error {
		return tx.PutRelationship(ctx, plainRelationship(user, typ, src, dst, created, ended))
	}
	hour := func(h int) time.Time { return epoch.Add(time.Duration(h) * time.Hour) }
	rid := func(src, dst string) string { return graph.RelationshipID(graph.RefersTo, src, dst) }
	err := s.Update(ctx, func(tx *graph.Tx) error {
		for id, typ := range map[string]string{"ent_a": "person", "ent_b": "person", "ent_c": "company", "ent_d": "company"} {
			if err := put(tx, id, typ); err != nil {
				return err
			}
		}
		for _, e := range []struct {
			src, dst       string
			created, ended time.Time
		}{
			{"ent_a", "ent_b", hour(1), time.Time{}},
			{"ent_c", "ent_a", hour(2), time.Time{}},
			{"ent_a", "ent_a", hour(3), time.Time{}},
			{"ent_b", "ent_d", hour(0), time.Time{}},
			{"ent_a", "ent_d", hour(4), hour(5)}, // ended: not listed
		} {
			if err := link(tx, graph.RefersTo, e.src, e.dst, e.created, e.ended); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	aa, ca, ab, bd := rid("ent_a", "ent_a"), rid("ent_c", "ent_a"), rid("ent_a", "ent_b"), rid("ent_b", "ent_d")
	for _, c := range []struct {
		ids, types     []string
		perEntity, lim int
		want           []string
	}{
		{[]string{"ent_a", "ent_b"}, nil, 50, 100, []string{aa, ca, ab, ab, bd}},
		{[]string{"ent_a", "ent_b"}, nil, 2, 100, []string{aa, ca, ab, bd}},
		{[]string{"ent_a", "ent_b"}, nil, 50, 3, []string{aa, ca, ab}},
		{[]string{"ent_missing", "ent_b", "ent_a"}, nil, 1, 100, []string{ab, aa}},
		{[]string{"ent_a", "ent_b"}, []string{"company"}, 50, 100, []string{ca, bd}},
		{[]string{"ent_a", "ent_b"}, []string{}, 50, 100, nil},
		{nil, nil, 50, 100, nil},
	} {
		q := graph.EntitiesRelationshipsQuery{UserID: user, EntityIDs: c.ids, EntityTypes: c.types, PerEntity: c.perEntity, Limit: c.lim}
		err := s.View(ctx, func(tx *graph.Tx) error {
			got, err := tx.RelationshipsOfEntities(ctx, q)
			if err != nil {
				return err
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !cmp.Equal(ids, c.want) {
				t.Errorf("RelationshipsOfEntities(%+v) = %v, want %v", q, ids, c.want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// The capability against the oracle, on a random graph of another user.
	const bob = "bob"
	rng := rand.New(rand.NewPCG(5, 11))
	const nodes, edges = 30, 150
	entityTypes := []string{"person", "company", "note"}
	ids := make([]string, nodes)
	err = s.Update(ctx, func(tx *graph.Tx) error {
		if _, ok := tx.DriverTx.(graph.EntitiesRelationshipsLister); !ok {
			return errNoLister
		}
		for i := range ids {
			ids[i] = fmt.Sprintf("ent_bob_%02d", rng.IntN(100)*100+i)
			if err := tx.PutEntity(ctx, graph.Entity{
				ID: ids[i], UserID: bob, Type: entityTypes[rng.IntN(len(entityTypes))], CanonicalName: ids[i],
				SchemaVersion: "1", LastObservationAt: epoch, CreatedAt: epoch, ComputedAt: epoch,
			}); err != nil {
				return err
			}
		}
		relTypes := []string{graph.PartOf, graph.RefersTo, "MENTORS"}
		for i := range edges {
			created := hour(rng.IntN(6))
			var ended time.Time
			if rng.IntN(5) == 0 {
				ended = created.Add(time.Hour)
			}
			typ, src, dst := relTypes[rng.IntN(len(relTypes))], ids[rng.IntN(nodes)], ids[rng.IntN(nodes)]
			if i%25 == 0 {
				dst = src
			}
			if err := tx.PutRelationship(ctx, graph.Relationship{
				ID: graph.RelationshipID(typ, src, dst), UserID: bob, Type: typ,
				SourceEntityID: src, TargetEntityID: dst, CreatedAt: created, LastObservationAt: created, EndedAt: ended,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoLister) {
		t.Skip("the driver offers no graph.EntitiesRelationshipsLister")
	}
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx *graph.Tx) error {
		lister := tx.DriverTx.(graph.EntitiesRelationshipsLister)
		for range 60 {
			var q graph.EntitiesRelationshipsQuery
			q.UserID = bob
			for range 1 + rng.IntN(12) {
				if rng.IntN(10) == 0 {
					q.EntityIDs = append(q.EntityIDs, "ent_bob_missing")
				} else {
					q.EntityIDs = append(q.EntityIDs, ids[rng.IntN(nodes)])
				}
			}
			q.EntityTypes = [][]string{nil, {"person", "company"}, {"note"}, {}}[rng.IntN(4)]
			q.PerEntity, q.Limit = []int{1, 3, 50}[rng.IntN(3)], []int{1, 7, 100}[rng.IntN(3)]
			want, err := tx.RelationshipsOfEntitiesByEntity(ctx, q)
			if err != nil {
				return err
			}
			got, err := lister.RelationshipsOfEntities(ctx, q)
			if err != nil {
				return err
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("RelationshipsOfEntities(%+v) differs from RelationshipsOfEntitiesByEntity (-want +got):\n%s", q, d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errNoLister = errors.New("graphtest: no graph.EntitiesRelationshipsLister")
