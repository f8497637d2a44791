package graphtest

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testErase checks graph.Eraser: an erased entity leaves with its
// identifiers, timeline events, raw fragments and every period of its
// relationships with their observations; erased observations and a source
// go; what the erasure does not name, and other users' rows, stay; the
// counts say what went. A driver without Eraser is ErrEraseUnsupported.
func testErase(t *testing.T, newStore Harness) {
	s := newStore(t)
	const a, b, c = "ent_alice_a", "ent_alice_b", "ent_alice_c"
	ended := link{graph.RefersTo, a, b, at(epoch, 1)}
	live := link{graph.DependsOn, c, a, at(epoch, 2)}
	kept := link{graph.PartOf, b, c, at(epoch, 3)}
	buildGraph(t, s, alice, []node{{a, "person"}, {b, "person"}, {c, "person"}}, []link{ended, live, kept})
	endLink(t, s, alice, ended, at(epoch, 4))
	createLink(t, s, alice, link{graph.RefersTo, a, b, at(epoch, 5)}) // a second period
	putEntities(t, s, newEntity(bob, "ent_bob_a", "person", epoch))
	putSources(t, s, newSource(alice, "src_alice_1", epoch), newSource(alice, "src_alice_2", epoch), newSource(bob, "src_bob", epoch))
	insertObservations(t, s, newObservation(alice, "obs_alice_a", a, "src_alice_1", 1), newObservation(alice, "obs_alice_b", b, "src_alice_2", 2),
		newObservation(bob, "obs_bob_a", "ent_bob_a", "src_bob", 1))
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		for _, f := range []graph.RawFragment{
			{ID: "raw_alice_a", UserID: alice, SourceID: "src_alice_1", EntityID: a, EntityType: "person", Field: "nick", Value: "ada", CreatedAt: epoch},
			{ID: "raw_alice_b", UserID: alice, SourceID: "src_alice_2", EntityID: b, EntityType: "person", Field: "nick", Value: "bea", CreatedAt: epoch},
		} {
			if err := tx.InsertRawFragment(ctx, f); err != nil {
				return err
			}
		}
		if err := tx.InsertRelationshipObservation(ctx, graph.RelationshipObservation{ID: "robs_alice_live", UserID: alice, RelationshipID: live.relID(),
			SourceID: "src_alice_2", ObservedAt: epoch, CreatedAt: epoch, Metadata: map[string]any{"x": 1}}); err != nil {
			return err
		}
		if err := tx.SetIdentifiers(ctx, alice, a, []graph.Identifier{{Field: "email", Value: "ada@example.org"}, {Field: "name", Value: "shared"}}); err != nil {
			return err
		}
		if err := tx.SetIdentifiers(ctx, alice, b, []graph.Identifier{{Field: "name", Value: "shared"}}); err != nil {
			return err
		}
		return tx.ReplaceTimelineEvents(ctx, alice, a, []graph.TimelineEvent{newEvent(alice, "evt_alice_a", a, "Birthday", "src_alice_1", 1)})
	})

	var n graph.ErasedCounts
	err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
		var err error
		n, err = tx.Erase(ctx, graph.Erasure{UserID: alice, EntityIDs: []string{a, "ent_alice_missing"}, ObservationIDs: []string{"obs_alice_a", "obs_bob_a"}, SourceIDs: []string{"src_alice_1"}})
		return err
	})
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	want := graph.ErasedCounts{Observations: 1, RawFragments: 1, Entities: 1, Identifiers: 2, TimelineEvents: 1,
		Relationships: 3, RelationshipObservations: 1, Sources: 1}
	n.Touched = nil
	diff(t, "erased counts", want, n)

	view(t, s, func(ctx context.Context, tx *graph.Tx) (struct{}, error) {
		_, err := tx.Entity(ctx, alice, a)
		wantNotFound(t, "the erased entity", err)
		_, err = tx.Source(ctx, alice, "src_alice_1")
		wantNotFound(t, "the erased source", err)
		_, err = tx.Observation(ctx, alice, "obs_alice_a")
		wantNotFound(t, "the erased observation", err)
		for _, id := range []string{ended.relID(), live.relID()} {
			_, err = tx.Relationship(ctx, alice, id)
			wantNotFound(t, "a relationship of the erased entity", err)
		}
		if _, err := tx.Relationship(ctx, alice, kept.relID()); err != nil {
			t.Errorf("a relationship between other entities: %v", err)
		}
		if got, err := tx.EntitiesByIdentifier(ctx, alice, "ada@example.org", ""); err != nil || len(got) != 0 {
			t.Errorf("found by the erased entity's identifier: %v, %v", got, err)
		}
		if got, err := tx.EntitiesByIdentifier(ctx, alice, "shared", ""); err != nil || len(got) != 1 || got[0].ID != b {
			t.Errorf("found by a shared identifier: %v, %v", got, err)
		}
		frags, err := tx.RawFragments(ctx, graph.RawFragmentQuery{UserID: alice})
		if err != nil || len(frags) != 1 || frags[0].ID != "raw_alice_b" {
			t.Errorf("raw fragments left: %v, %v", frags, err)
		}
		events, _, err := tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: alice})
		if err != nil || len(events) != 0 {
			t.Errorf("timeline events left: %v, %v", events, err)
		}
		if _, err := tx.Observation(ctx, bob, "obs_bob_a"); err != nil {
			t.Errorf("another user's observation named in the erasure: %v", err)
		}
		if _, err := tx.Entity(ctx, alice, b); err != nil {
			t.Errorf("an entity not named: %v", err)
		}
		return struct{}{}, nil
	})
}
