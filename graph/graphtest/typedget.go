package graphtest

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

var errNoTypedGetter = errors.New("graphtest: no graph.TypedRelationshipGetter")

// testRelationshipOfType checks the optional graph.TypedRelationshipGetter
// capability: for relationships of built-in and other types, one of them
// ended and live again, RelationshipOfType with the relationship's type
// gives exactly what Relationship (the oracle) gives, and with another
// type, for another user or for an unknown id a *NotFoundError. A driver
// without the capability skips it.
func testRelationshipOfType(t *testing.T, newStore Harness) {
	s := newStore(t)
	putEntities(t, s, newEntity(alice, "ent_alice_t1", "person", epoch), newEntity(alice, "ent_alice_t2", "company", epoch))
	type made struct{ typ, id string }
	var rels []made
	err := tryUpdate(t, s, func(ctx context.Context, tx *graph.Tx) error {
		if _, ok := tx.DriverTx.(graph.TypedRelationshipGetter); !ok {
			return errNoTypedGetter
		}
		for _, typ := range []string{graph.PartOf, graph.RefersTo, "MENTORS"} {
			rel, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
				UserID: alice, Type: typ, SourceEntityID: "ent_alice_t1", TargetEntityID: "ent_alice_t2", Now: at(epoch, 1),
			})
			if err != nil {
				return err
			}
			rels = append(rels, made{typ, rel.ID})
		}
		// REFERS_TO ends and starts again: its newest period is live.
		if _, err := tx.EndRelationship(ctx, alice, rels[1].id, at(epoch, 2)); err != nil {
			return err
		}
		_, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
			UserID: alice, Type: graph.RefersTo, SourceEntityID: "ent_alice_t1", TargetEntityID: "ent_alice_t2", Now: at(epoch, 3),
		})
		return err
	})
	if errors.Is(err, errNoTypedGetter) {
		t.Skip("the driver offers no graph.TypedRelationshipGetter")
	}
	if err != nil {
		t.Fatal(err)
	}
	err = tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
		get := tx.DriverTx.(graph.TypedRelationshipGetter)
		for _, r := range rels {
			want, err := tx.Relationship(ctx, alice, r.id)
			if err != nil {
				return err
			}
			got, err := get.RelationshipOfType(ctx, alice, r.typ, r.id)
			if err != nil {
				return err
			}
			diff(t, "RelationshipOfType "+r.typ, want, got)
			for _, other := range []string{graph.DependsOn, "NO_SUCH_TYPE"} {
				_, err := get.RelationshipOfType(ctx, alice, other, r.id)
				wantNotFoundError(t, "RelationshipOfType with the type "+other, err, r.id)
			}
			_, err = get.RelationshipOfType(ctx, bob, r.typ, r.id)
			wantNotFoundError(t, "RelationshipOfType of another user", err, r.id)
		}
		_, err := get.RelationshipOfType(ctx, alice, graph.PartOf, "rel_missing")
		wantNotFoundError(t, "RelationshipOfType of an unknown id", err, "rel_missing")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
