package graphtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// create runs CreateRelationship in its own transaction.
func create(t *testing.T, s *graph.Store, in graph.NewRelationship) (graph.Relationship, bool, error) {
	t.Helper()
	var rel graph.Relationship
	var created bool
	err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
		var err error
		rel, created, err = tx.CreateRelationship(ctx, in)
		return err
	})
	return rel, created, err
}

// relationship reads the newest period of a relationship.
func relationship(t *testing.T, s *graph.Store, user, id string) (graph.Relationship, error) {
	t.Helper()
	var rel graph.Relationship
	err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
		var err error
		rel, err = tx.Relationship(ctx, user, id)
		return err
	})
	return rel, err
}

func testCreateRelationship(t *testing.T, newStore Harness) {
	s := newStore(t)
	const a, b, c, d = "ent_alice_a", "ent_alice_b", "ent_alice_c", "ent_alice_d"
	putEntities(t, s,
		newEntity(alice, a, "person", epoch), newEntity(alice, b, "person", epoch),
		newEntity(alice, c, "person", epoch), newEntity(alice, d, "person", epoch))

	t.Run("DeterministicID", func(t *testing.T) {
		in := graph.NewRelationship{UserID: alice, Type: graph.RefersTo, SourceEntityID: a, TargetEntityID: b, Now: at(epoch, 1)}
		rel, created, err := create(t, s, in)
		if err != nil || !created {
			t.Fatalf("CreateRelationship = created %v, err %v; want a new edge", created, err)
		}
		want := graph.Relationship{
			ID: graph.RelationshipID(graph.RefersTo, a, b), UserID: alice, Type: graph.RefersTo,
			SourceEntityID: a, TargetEntityID: b, Metadata: map[string]any{}, Provenance: map[string]string{},
			CreatedAt: at(epoch, 1), LastObservationAt: at(epoch, 1),
		}
		diff(t, "created relationship", want, rel)
		stored, err := relationship(t, s, alice, want.ID)
		if err != nil {
			t.Fatalf("Relationship: %v", err)
		}
		diff(t, "stored relationship", want, stored)
		if !stored.Live(time.Time{}) {
			t.Errorf("new relationship is not live")
		}

		in.Now = at(epoch, 2)
		again, created, err := create(t, s, in)
		if err != nil || created {
			t.Errorf("CreateRelationship again = created %v, err %v; want the existing edge", created, err)
		}
		diff(t, "relationship created again", want, again)

		in.SourceEntityID, in.TargetEntityID = b, a
		back, created, err := create(t, s, in)
		if err != nil || !created || back.ID != graph.RelationshipID(graph.RefersTo, b, a) || back.ID == want.ID {
			t.Errorf("reverse edge = %s, created %v, err %v; want a new edge with id %s",
				back.ID, created, err, graph.RelationshipID(graph.RefersTo, b, a))
		}

		before := graph.Now()
		now, created, err := create(t, s, graph.NewRelationship{UserID: alice, Type: graph.Settles, SourceEntityID: a, TargetEntityID: b})
		after := graph.Now()
		if err != nil || !created {
			t.Fatalf("CreateRelationship without Now = created %v, err %v", created, err)
		}
		if now.CreatedAt.Before(before) || now.CreatedAt.After(after) {
			t.Errorf("CreatedAt without Now = %v, want between %v and %v", now.CreatedAt, before, after)
		}
	})

	t.Run("InvalidType", func(t *testing.T) {
		for _, typ := range []string{"", "part_of", "Part_Of", "PART-OF", "PART OF", " PART_OF", "1PART", "_PART",
			"PARTÖF", "A" + strings.Repeat("B", 64)} {
			_, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: c, TargetEntityID: d})
			if !errors.Is(err, graph.ErrInvalidRelationshipType) {
				t.Errorf("CreateRelationship(type %q): err = %v, want graph.ErrInvalidRelationshipType", typ, err)
			}
		}
		for _, typ := range []string{"MENTORS", "X", "HAS_2_PARTS", "A" + strings.Repeat("B", 63)} {
			if _, created, err := create(t, s, graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: c, TargetEntityID: d}); err != nil || !created {
				t.Errorf("CreateRelationship(type %q) = created %v, err %v; want a new edge", typ, created, err)
			}
		}
	})

	t.Run("MissingEndpoint", func(t *testing.T) {
		tests := []struct{ name, src, dst, missing string }{
			{"Source", "ent_alice_nope", b, "ent_alice_nope"},
			{"Target", a, "ent_alice_nope", "ent_alice_nope"},
		}
		for _, tc := range tests {
			for _, typ := range []string{graph.RefersTo, graph.PartOf} {
				_, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: typ, SourceEntityID: tc.src, TargetEntityID: tc.dst})
				wantNotFoundError(t, tc.name+" "+typ, err, tc.missing)
				var nf *graph.NotFoundError
				if errors.As(err, &nf) && nf.What != "entity" {
					t.Errorf("%s %s: NotFoundError.What = %q, want \"entity\"", tc.name, typ, nf.What)
				}
			}
		}
	})

	t.Run("PutWithoutEndpoints", func(t *testing.T) {
		for _, ends := range [][2]string{{a, "ent_alice_nope"}, {"ent_alice_nope", b}, {a, "ent_bob_a"}} {
			err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
				return tx.PutRelationship(ctx, graph.Relationship{
					ID: graph.RelationshipID(graph.RefersTo, ends[0], ends[1]), UserID: alice, Type: graph.RefersTo,
					SourceEntityID: ends[0], TargetEntityID: ends[1], CreatedAt: epoch, LastObservationAt: epoch,
				})
			})
			wantNotFound(t, "PutRelationship "+ends[0]+" → "+ends[1], err)
		}
	})

	t.Run("MergedEndpoints", func(t *testing.T) {
		// m1 was merged into m2, which was merged into m3; n1 into b.
		m1, m2, n1 := newEntity(alice, "ent_alice_m1", "person", epoch), newEntity(alice, "ent_alice_m2", "person", epoch), newEntity(alice, "ent_alice_n1", "person", epoch)
		m1.MergedInto, m1.MergedAt = m2.ID, at(epoch, 1)
		m2.MergedInto, m2.MergedAt = "ent_alice_m3", at(epoch, 2)
		n1.MergedInto, n1.MergedAt = b, at(epoch, 3)
		putEntities(t, s, m1, m2, n1, newEntity(alice, "ent_alice_m3", "person", epoch))
		rel, created, err := create(t, s, graph.NewRelationship{UserID: alice, Type: graph.PartOf, SourceEntityID: m1.ID, TargetEntityID: n1.ID, Now: at(epoch, 5)})
		if err != nil || !created {
			t.Fatalf("CreateRelationship between merged entities = created %v, err %v", created, err)
		}
		if rel.SourceEntityID != "ent_alice_m3" || rel.TargetEntityID != b || rel.ID != graph.RelationshipID(graph.PartOf, "ent_alice_m3", b) {
			t.Errorf("edge between merged entities = %s %s → %s, want %s ent_alice_m3 → %s",
				rel.ID, rel.SourceEntityID, rel.TargetEntityID, graph.RelationshipID(graph.PartOf, "ent_alice_m3", b), b)
		}
		if _, err := relationship(t, s, alice, graph.RelationshipID(graph.PartOf, m1.ID, n1.ID)); !errors.Is(err, graph.ErrNotFound) {
			t.Errorf("an edge was stored on the merged ids: err = %v", err)
		}
		_, _, err = create(t, s, graph.NewRelationship{UserID: alice, Type: graph.PartOf, SourceEntityID: m2.ID, TargetEntityID: "ent_alice_m3"})
		var cycle *graph.CycleError
		if !errors.As(err, &cycle) || len(cycle.Path) != 1 || cycle.Path[0] != "ent_alice_m3" {
			t.Errorf("acyclic edge from a merged entity to where it went: err = %v, want a self-loop *graph.CycleError", err)
		}
	})
}

func testEndRelationship(t *testing.T, newStore Harness) {
	s := newStore(t)
	const a, b = "ent_alice_a", "ent_alice_b"
	l := link{graph.RefersTo, a, b, at(epoch, 10)}
	first := buildGraph(t, s, alice, []node{{a, "person"}, {b, "person"}}, []link{l})[l.relID()]

	ended := endLink(t, s, alice, l, at(epoch, 20))
	wantEnded := first
	wantEnded.EndedAt = at(epoch, 20)
	diff(t, "EndRelationship", wantEnded, ended)
	stored, err := relationship(t, s, alice, l.relID())
	if err != nil {
		t.Fatalf("Relationship of an ended edge: %v", err)
	}
	diff(t, "ended relationship", wantEnded, stored)
	if stored.Live(time.Time{}) || !stored.Live(at(epoch, 15)) || stored.Live(at(epoch, 20)) {
		t.Errorf("Live of an edge of [10s, 20s): now %v, 15s %v, 20s %v; want false, true, false",
			stored.Live(time.Time{}), stored.Live(at(epoch, 15)), stored.Live(at(epoch, 20)))
	}

	for _, id := range []string{l.relID(), "rel_missing"} {
		err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.EndRelationship(ctx, alice, id, at(epoch, 25))
			return err
		})
		wantNotFoundError(t, "EndRelationship of an edge that is not live", err, id)
	}

	l.at = at(epoch, 30)
	second := createLink(t, s, alice, l)
	wantSecond := first
	wantSecond.CreatedAt, wantSecond.LastObservationAt = at(epoch, 30), at(epoch, 30)
	diff(t, "relationship created again", wantSecond, second)
	stored, err = relationship(t, s, alice, l.relID())
	if err != nil {
		t.Fatalf("Relationship: %v", err)
	}
	diff(t, "newest period", wantSecond, stored)

	for _, tc := range []struct {
		name string
		at   time.Time
		want []graph.Relationship
	}{
		{"Now", time.Time{}, []graph.Relationship{wantSecond}},
		{"BeforeFirst", at(epoch, 5), nil},
		{"FirstPeriodStart", at(epoch, 10), []graph.Relationship{wantEnded}},
		{"FirstPeriod", at(epoch, 15), []graph.Relationship{wantEnded}},
		{"FirstPeriodEnd", at(epoch, 20), nil},
		{"Gap", at(epoch, 25), nil},
		{"SecondPeriod", at(epoch, 35), []graph.Relationship{wantSecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Relationship], error) {
				return listed(tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: alice, EntityID: a, At: tc.at}))
			})
			diff(t, "ListRelationships", tc.want, got.Rows)
			edges := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Edge, error) {
				return tx.Edges(ctx, graph.EdgeQuery{UserID: alice, EntityIDs: []string{a}, Direction: graph.Both, At: tc.at})
			})
			var wantEdges []graph.Edge
			for _, r := range tc.want {
				wantEdges = append(wantEdges, graph.Edge{Relationship: r, SourceType: "person", TargetType: "person"})
			}
			diff(t, "Edges", wantEdges, edges)
		})
	}

	t.Run("EndNow", func(t *testing.T) {
		before := graph.Now()
		rel := endLink(t, s, alice, l, time.Time{})
		if rel.EndedAt.Before(before) || rel.EndedAt.After(graph.Now()) {
			t.Errorf("EndedAt without a time = %v, want about now (%v)", rel.EndedAt, before)
		}
	})
}

func testRelationshipObservations(t *testing.T, newStore Harness) {
	s := newStore(t)
	const a, b = "ent_alice_a", "ent_alice_b"
	l := link{graph.RefersTo, a, b, at(epoch, 1)}
	buildGraph(t, s, alice, []node{{a, "person"}, {b, "person"}}, []link{l})
	putSources(t, s, newSource(alice, "src_alice", epoch))
	robs := func(id string, observed int) graph.RelationshipObservation {
		return graph.RelationshipObservation{
			ID: id, UserID: alice, RelationshipID: l.relID(), SourceID: "src_alice",
			ObservedAt: at(epoch, observed), CreatedAt: at(epoch, 100), SpecificityScore: 0.5, SourcePriority: 100,
			Metadata: map[string]any{"since": 2020, "role": id},
		}
	}
	o2, o1, o3 := robs("robs_alice_2", 5), robs("robs_alice_1", 5), robs("robs_alice_3", 9)
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		for _, o := range []graph.RelationshipObservation{o2, o1, o3} {
			if err := tx.InsertRelationshipObservation(ctx, o); err != nil {
				return err
			}
		}
		return nil
	})
	got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.RelationshipObservation, error) {
		return tx.RelationshipObservations(ctx, alice, l.relID())
	})
	want := []graph.RelationshipObservation{o3, o1, o2}
	for i := range want {
		want[i].Metadata = jsonValue(t, want[i].Metadata)
	}
	diff(t, "RelationshipObservations", want, got)
	err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error { return tx.InsertRelationshipObservation(ctx, o1) })
	if !errors.Is(err, graph.ErrConflict) {
		t.Errorf("InsertRelationshipObservation of an existing id: err = %v, want graph.ErrConflict", err)
	}
}
