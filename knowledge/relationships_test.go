package knowledge_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// company stores a company and returns its id.
func company(t *testing.T, s *knowledge.Service, c knowledge.Caller, name string) string {
	t.Helper()
	return store(t, s, c, map[string]any{"entity_type": "company", "name": name}).Entities[0].EntityID
}

func relate(t *testing.T, s *knowledge.Service, c knowledge.Caller, typ, from, to string, meta map[string]any) graph.Relationship {
	t.Helper()
	rel, _, err := s.CreateRelationship(t.Context(), c, knowledge.RelationshipRequest{Type: typ, SourceEntityID: from, TargetEntityID: to, Metadata: meta})
	if err != nil {
		t.Fatalf("relate %s %s→%s: %v", typ, from, to, err)
	}
	return rel
}

func TestCreateRelationshipRules(t *testing.T) {
	s, clk := newService(t)
	a, b, c := company(t, s, alice, "A"), company(t, s, alice, "B"), company(t, s, alice, "C")
	r1 := relate(t, s, alice, graph.PartOf, a, b, map[string]any{"since": "2020"})
	clk.Advance(time.Second)
	r2, created, err := s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: a, TargetEntityID: b, Metadata: map[string]any{"role": "division"}})
	if err != nil || created || r2.ID != r1.ID || r2.ID != graph.RelationshipID(graph.PartOf, a, b) {
		t.Fatalf("second create = %s created=%v err=%v; want the same deterministic id, not created", r2.ID, created, err)
	}
	rel, obs, err := s.RelationshipSnapshot(t.Context(), alice, graph.PartOf, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 || rel.ObservationCount != 2 {
		t.Errorf("observations = %d (count %d), want 2", len(obs), rel.ObservationCount)
	}
	if diff := cmp.Diff(map[string]any{"since": "2020", "role": "division"}, rel.Metadata); diff != "" {
		t.Errorf("merged metadata (-want +got):\n%s", diff)
	}
	relate(t, s, alice, graph.PartOf, b, c, nil)

	_, _, err = s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: c, TargetEntityID: a})
	var cycle *graph.CycleError
	if !errors.As(err, &cycle) {
		t.Fatalf("C PART_OF A: err = %v, want a cycle", err)
	}
	if diff := cmp.Diff([]string{c, a, b, c}, cycle.Cycle()); diff != "" {
		t.Errorf("cycle path (-want +got):\n%s", diff)
	}
	// A type no schema declares is the user's on first use, not acyclic;
	// a malformed name, or one of Cairn's own edges' types, is refused.
	for _, bad := range []string{"likes", "WORKS-AT", "PRODUCED"} {
		if _, _, err := s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: bad, SourceEntityID: a, TargetEntityID: b}); !errors.Is(err, knowledge.ErrInvalidRelationshipType) {
			t.Errorf("type %q: err = %v, want ErrInvalidRelationshipType", bad, err)
		}
	}
	for _, r := range []knowledge.RelationshipRequest{{Type: "LIKES", SourceEntityID: a, TargetEntityID: b}, {Type: "LIKES", SourceEntityID: b, TargetEntityID: a}} {
		if _, created, err := s.CreateRelationship(t.Context(), alice, r); err != nil || !created {
			t.Errorf("LIKES %s → %s, a type used not declared: created %v, err %v; want created, no cycle check", r.SourceEntityID, r.TargetEntityID, created, err)
		}
	}
	if _, _, err := s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: graph.RefersTo, SourceEntityID: a, TargetEntityID: "ent_nope"}); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("missing target: err = %v, want ErrEntityNotFound", err)
	}
	bobs := company(t, s, bob, "Bob's")
	if _, _, err := s.CreateRelationship(t.Context(), alice, knowledge.RelationshipRequest{Type: graph.RefersTo, SourceEntityID: a, TargetEntityID: bobs}); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("another user's entity as target: err = %v, want ErrEntityNotFound", err)
	}
}

func TestRelationshipsAsOf(t *testing.T) {
	s, clk := newService(t)
	a, b := company(t, s, alice, "A"), company(t, s, alice, "B")
	relate(t, s, alice, graph.DependsOn, a, b, nil)
	live := clk.Advance(time.Minute)
	clk.Advance(time.Minute)
	if _, err := s.DeleteRelationship(t.Context(), alice, graph.DependsOn, a, b); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	now, _, err := s.ListRelationships(t.Context(), alice, knowledge.RelationshipQuery{EntityID: a})
	if err != nil || len(now) != 0 {
		t.Errorf("after delete: %v, %v; want none", now, err)
	}
	then, _, err := s.ListRelationships(t.Context(), alice, knowledge.RelationshipQuery{EntityID: a, At: live})
	if err != nil || len(then) != 1 || then[0].EndedAt.IsZero() {
		t.Errorf("as of %s: %+v, %v; want the ended relationship", live, then, err)
	}
	rel, err := s.RelatedEntities(t.Context(), alice, knowledge.RelatedQuery{EntityID: a, At: live})
	if err != nil || len(rel.Reached) != 1 || rel.Reached[0].EntityID != b {
		t.Errorf("traversal as of %s reached %+v, %v; want B", live, rel.Reached, err)
	}
	// The ended edge no longer blocks its reverse.
	relate(t, s, alice, graph.DependsOn, b, a, nil)
}

func TestRelatedEntitiesAndNeighborhood(t *testing.T) {
	s, _ := newService(t)
	a, b, c, d := company(t, s, alice, "A"), company(t, s, alice, "B"), company(t, s, alice, "C"), company(t, s, alice, "D")
	secret := store(t, s, alice, map[string]any{"entity_type": "contract", "title": "Secret deal", "counterparty": "D"}).Entities[0].EntityID
	relate(t, s, alice, graph.PartOf, a, b, nil)
	relate(t, s, alice, graph.PartOf, b, c, nil)
	relate(t, s, alice, graph.RefersTo, c, secret, nil)
	relate(t, s, alice, graph.RefersTo, secret, d, nil)

	res, err := s.RelatedEntities(t.Context(), alice, knowledge.RelatedQuery{EntityID: c, MaxHops: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range res.Reached {
		got[r.EntityID] = r.Hops
	}
	if diff := cmp.Diff(map[string]int{b: 1, secret: 1, a: 2, d: 2}, got); diff != "" {
		t.Errorf("2-hop neighbourhood of C (-want +got):\n%s", diff)
	}
	noContracts := alice
	noContracts.Allowed = func(_ knowledge.Action, resource string) bool {
		return resource != knowledge.EntityResource("contract")
	}
	res, err = s.RelatedEntities(t.Context(), noContracts, knowledge.RelatedQuery{EntityID: c, MaxHops: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Reached {
		if r.EntityID == secret || r.EntityID == d {
			t.Errorf("a caller who may not read contracts reached %s (through the contract)", r.EntityID)
		}
	}
	if _, err := s.RelatedEntities(t.Context(), alice, knowledge.RelatedQuery{EntityID: c, MaxHops: 6}); !errors.Is(err, knowledge.ErrValidation) {
		t.Errorf("max_hops 6: err = %v, want a validation error", err)
	}

	n, err := s.Neighborhood(t.Context(), alice, knowledge.NeighborhoodQuery{NodeID: c, IncludeObservations: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Relationships) != 2 || len(n.RelatedEntities) != 2 || len(n.Sources) != 1 || len(n.Observations) != 1 {
		t.Errorf("neighbourhood of C: %d relationships, %d entities, %d sources, %d observations; want 2, 2, 1, 1",
			len(n.Relationships), len(n.RelatedEntities), len(n.Sources), len(n.Observations))
	}
	src := n.Sources[0].ID
	n, err = s.Neighborhood(t.Context(), alice, knowledge.NeighborhoodQuery{NodeID: src, NodeType: "source"})
	if err != nil || n.Source == nil || len(n.RelatedEntities) != 1 || n.RelatedEntities[0].ID != c {
		t.Errorf("neighbourhood of C's source: %+v, %v", n, err)
	}
	if _, err := s.Neighborhood(t.Context(), alice, knowledge.NeighborhoodQuery{NodeID: "src_nope", NodeType: "source"}); !errors.Is(err, knowledge.ErrSourceNotFound) {
		t.Errorf("unknown source: err = %v, want ErrSourceNotFound", err)
	}
}

func TestMatchPattern(t *testing.T) {
	s, _ := newService(t)
	acme := store(t, s, alice, map[string]any{"entity_type": "company", "name": "Acme", "industry": "Rocket parts"}).Entities[0].EntityID
	store(t, s, alice, map[string]any{"entity_type": "company", "name": "Globex", "industry": "Chemicals"})
	ada := store(t, s, alice, map[string]any{"entity_type": "person", "name": "Ada", "company": "Acme"}).Entities[0].EntityID
	relate(t, s, alice, graph.PartOf, ada, acme, nil)

	tests := []struct {
		name string
		p    knowledge.Pattern
		want []string
	}{
		{"type and contains", knowledge.Pattern{EntityType: "company", Field: "industry", Contains: "rocket"}, []string{acme}},
		{"equals ignores case", knowledge.Pattern{Field: "name", Equals: "ACME"}, []string{acme}},
		{"relationship to a neighbour type", knowledge.Pattern{EntityType: "company", RelationshipType: graph.PartOf, NeighborType: "person"}, []string{acme}},
		{"outbound only", knowledge.Pattern{RelationshipType: graph.PartOf, Direction: graph.Outbound}, []string{ada}},
		{"no match", knowledge.Pattern{EntityType: "company", Field: "industry", Equals: "banking"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matches, _, err := s.MatchPattern(t.Context(), alice, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range matches {
				got = append(got, m.Entity.ID)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A relationship ended and created again keeps what its earlier
// observations said: its metadata merges every observation of every period.
func TestRecreatedRelationshipKeepsEarlierMetadata(t *testing.T) {
	s, clk := newService(t)
	a, b := company(t, s, alice, "A"), company(t, s, alice, "B")
	relate(t, s, alice, graph.DependsOn, a, b, map[string]any{"since": "2020"})
	clk.Advance(time.Minute)
	if _, err := s.DeleteRelationship(t.Context(), alice, graph.DependsOn, a, b); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	rel := relate(t, s, alice, graph.DependsOn, a, b, map[string]any{"role": "supplier"})
	if rel.Metadata["since"] != "2020" || rel.Metadata["role"] != "supplier" || rel.ObservationCount != 2 {
		t.Errorf("recreated: metadata %v, %d observations; want since and role from 2 observations", rel.Metadata, rel.ObservationCount)
	}
	fresh := relate(t, s, alice, graph.RefersTo, a, b, map[string]any{"note": "new"})
	if fresh.Metadata["note"] != "new" || fresh.ObservationCount != 1 || fresh.Provenance["note"] == "" {
		t.Errorf("new: metadata %v, provenance %v, %d observations", fresh.Metadata, fresh.Provenance, fresh.ObservationCount)
	}
}
