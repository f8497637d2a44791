package graphtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

func testIdentifiers(t *testing.T, newStore Harness) {
	s := newStore(t)
	merged := newEntity(alice, "ent_alice_d", "person", at(epoch, 4))
	merged.MergedInto, merged.MergedAt = "ent_alice_a", at(epoch, 5)
	putEntities(t, s,
		newEntity(alice, "ent_alice_b", "person", at(epoch, 1)),
		newEntity(alice, "ent_alice_a", "person", at(epoch, 2)),
		newEntity(alice, "ent_alice_c", "org", at(epoch, 3)),
		merged,
	)
	set := func(t *testing.T, id string, ids ...graph.Identifier) {
		t.Helper()
		update(t, s, func(ctx context.Context, tx *graph.Tx) error {
			if err := tx.SetIdentifiers(ctx, alice, id, ids); err != nil {
				return fmt.Errorf("set identifiers of %s: %w", id, err)
			}
			return nil
		})
	}
	ada := graph.Identifier{Field: "name", Value: "ada"}
	set(t, "ent_alice_b", graph.Identifier{Field: "email", Value: "ada@example.com"}, ada)
	set(t, "ent_alice_a", ada)
	set(t, "ent_alice_c", ada)
	set(t, "ent_alice_d", ada)

	type lookup struct {
		value, entityType string
		want              []string
	}
	check := func(t *testing.T, lookups []lookup) {
		t.Helper()
		for _, l := range lookups {
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
				return tx.EntitiesByIdentifier(ctx, alice, l.value, l.entityType)
			})
			diff(t, fmt.Sprintf("EntitiesByIdentifier(%q, %q) ids", l.value, l.entityType), l.want, entityIDs(got))
		}
	}

	t.Run("Lookup", func(t *testing.T) {
		check(t, []lookup{
			{"ada", "", []string{"ent_alice_a", "ent_alice_b", "ent_alice_c"}},
			{"ada", "person", []string{"ent_alice_a", "ent_alice_b"}},
			{"ada", "org", []string{"ent_alice_c"}},
			{"ada", "project", nil},
			{"ada@example.com", "", []string{"ent_alice_b"}},
			{"nobody", "", nil},
		})
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Entity, error) {
			return tx.EntitiesByIdentifier(ctx, alice, "ada@example.com", "")
		})
		want := newEntity(alice, "ent_alice_b", "person", at(epoch, 1))
		want.Snapshot = jsonValue(t, want.Snapshot)
		diff(t, "EntitiesByIdentifier", []graph.Entity{want}, got)
	})

	t.Run("Replace", func(t *testing.T) {
		set(t, "ent_alice_b", graph.Identifier{Field: "name", Value: "lovelace"})
		set(t, "ent_alice_a")
		check(t, []lookup{
			{"ada", "", []string{"ent_alice_c"}},
			{"ada@example.com", "", nil},
			{"lovelace", "", []string{"ent_alice_b"}},
		})
	})
}
