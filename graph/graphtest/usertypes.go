package graphtest

import (
	"context"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testUserDefinedTypes: entity types and relationship types that no built-in
// schema names (the ones users' schemas create) are stored, listed and
// counted like any other, and a registered relationship type declared
// acyclic refuses a cycle while an undeclared one does not.
func testUserDefinedTypes(t *testing.T, newStore Harness) {
	s := newStore(t)
	types := []string{"recipe", "bank_account", "tax_2024"}
	var ents []graph.Entity
	for i, typ := range types {
		for _, n := range []string{"a", "b"} {
			ents = append(ents, newEntity(alice, "ent_alice_"+typ+"_"+n, typ, at(epoch, i)))
		}
	}
	putEntities(t, s, ents...)
	for _, typ := range types {
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Entity], error) {
			return listed(tx.ListEntities(ctx, graph.EntityFilter{UserID: alice, Types: []string{typ}}))
		})
		if got.Total != 2 || len(got.Rows) != 2 || got.Rows[0].Type != typ {
			t.Errorf("ListEntities of %s: %d rows of %d, want its 2", typ, len(got.Rows), got.Total)
		}
	}
	counts := view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string]int, error) {
		return tx.EntityTypeCounts(ctx, alice)
	})
	diff(t, "EntityTypeCounts", map[string]int{"recipe": 2, "bank_account": 2, "tax_2024": 2}, counts)

	a, b := "ent_alice_recipe_a", "ent_alice_recipe_b"
	if _, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: "INGREDIENT_OF", SourceEntityID: a, TargetEntityID: b, Acyclic: true}); err != nil {
		t.Fatal(err)
	}
	_, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: "INGREDIENT_OF", SourceEntityID: b, TargetEntityID: a, Acyclic: true})
	wantCycle(t, "a declared acyclic type closing a cycle", err, "INGREDIENT_OF", []string{a, b})
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		if _, _, err := create(t, s, graph.NewRelationship{UserID: alice, Type: "PAIRS_WITH", SourceEntityID: pair[0], TargetEntityID: pair[1]}); err != nil {
			t.Errorf("PAIRS_WITH %s → %s (not acyclic): %v", pair[0], pair[1], err)
		}
	}
}
