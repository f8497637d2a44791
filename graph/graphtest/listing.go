package graphtest

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// neighbourhood is the graph the ListRelationships and Edges tests read:
// a hub n with edges of several types in both directions, a tie on
// CreatedAt, an edge that ended and one created late. The hub's type is in
// no EntityTypes filter, so that filters are seen to apply to the other
// endpoint.
type neighbourhood struct {
	rels  map[string]graph.Relationship
	types map[string]string // entity id → type
	r     map[int]string    // link number → relationship id
}

func buildNeighbourhood(t *testing.T, s *graph.Store) neighbourhood {
	t.Helper()
	nodes := []node{
		{"ent_alice_n", "hub"}, {"ent_alice_a", "person"}, {"ent_alice_b", "project"}, {"ent_alice_c", "person"},
		{"ent_alice_d", "org"}, {"ent_alice_e", "secret"}, {"ent_alice_f", "person"},
	}
	links := map[int]link{
		1: {graph.RefersTo, "ent_alice_n", "ent_alice_a", at(epoch, 1)},
		2: {graph.PartOf, "ent_alice_n", "ent_alice_b", at(epoch, 2)},
		3: {graph.RefersTo, "ent_alice_c", "ent_alice_n", at(epoch, 3)},
		4: {graph.DependsOn, "ent_alice_d", "ent_alice_n", at(epoch, 3)},
		5: {graph.RefersTo, "ent_alice_n", "ent_alice_e", at(epoch, 5)},
		6: {graph.RefersTo, "ent_alice_a", "ent_alice_b", at(epoch, 6)},
		7: {graph.Settles, "ent_alice_n", "ent_alice_f", at(epoch, 8)},
		8: {graph.RefersTo, "ent_alice_n", "ent_alice_f", at(epoch, 20)},
	}
	ordered := make([]link, 0, len(links))
	nb := neighbourhood{types: map[string]string{}, r: map[int]string{}}
	for i := 1; i <= len(links); i++ {
		ordered = append(ordered, links[i])
		nb.r[i] = links[i].relID()
	}
	for _, n := range nodes {
		nb.types[n.id] = n.typ
	}
	nb.rels = buildGraph(t, s, alice, nodes, ordered)
	nb.rels[nb.r[7]] = endLink(t, s, alice, links[7], at(epoch, 12))
	return nb
}

// listOrder returns the relationships numbered ns in ListRelationships
// order: CreatedAt descending, then id.
func (nb neighbourhood) listOrder(ns ...int) []graph.Relationship {
	out := make([]graph.Relationship, len(ns))
	for i, n := range ns {
		out[i] = nb.rels[nb.r[n]]
	}
	slices.SortFunc(out, func(a, b graph.Relationship) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// edgeOrder returns the relationships numbered ns as edges in id order.
func (nb neighbourhood) edgeOrder(ns ...int) []graph.Edge {
	out := make([]graph.Edge, len(ns))
	for i, n := range ns {
		r := nb.rels[nb.r[n]]
		out[i] = graph.Edge{Relationship: r, SourceType: nb.types[r.SourceEntityID], TargetType: nb.types[r.TargetEntityID]}
	}
	slices.SortFunc(out, func(a, b graph.Edge) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func testListRelationships(t *testing.T, newStore Harness) {
	s := newStore(t)
	nb := buildNeighbourhood(t, s)
	const n, a = "ent_alice_n", "ent_alice_a"
	tests := []struct {
		name      string
		filter    graph.RelationshipFilter
		want      []int // link numbers, in any order: the test sorts them
		page      []int // when set, the rows expected instead of want, in order
		wantTotal int
	}{
		{name: "Both", filter: graph.RelationshipFilter{EntityID: n}, want: []int{1, 2, 3, 4, 5, 8}},
		{name: "ExplicitBoth", filter: graph.RelationshipFilter{EntityID: n, Direction: graph.Both}, want: []int{1, 2, 3, 4, 5, 8}},
		{name: "Outbound", filter: graph.RelationshipFilter{EntityID: n, Direction: graph.Outbound}, want: []int{1, 2, 5, 8}},
		{name: "Inbound", filter: graph.RelationshipFilter{EntityID: n, Direction: graph.Inbound}, want: []int{3, 4}},
		{name: "OtherEntity", filter: graph.RelationshipFilter{EntityID: a}, want: []int{1, 6}},
		{name: "Type", filter: graph.RelationshipFilter{EntityID: n, Type: graph.RefersTo}, want: []int{1, 3, 5, 8}},
		{name: "TypeAndDirection", filter: graph.RelationshipFilter{EntityID: n, Type: graph.RefersTo, Direction: graph.Inbound}, want: []int{3}},
		{name: "UnknownType", filter: graph.RelationshipFilter{EntityID: n, Type: "MENTORS"}},
		{name: "AtBeforeEverything", filter: graph.RelationshipFilter{EntityID: n, At: epoch}},
		{name: "AtCreation", filter: graph.RelationshipFilter{EntityID: n, At: at(epoch, 2)}, want: []int{1, 2}},
		{name: "AtBeforeEnd", filter: graph.RelationshipFilter{EntityID: n, At: at(epoch, 10)}, want: []int{1, 2, 3, 4, 5, 7}},
		{name: "AtEnd", filter: graph.RelationshipFilter{EntityID: n, At: at(epoch, 12)}, want: []int{1, 2, 3, 4, 5}},
		{name: "AtLate", filter: graph.RelationshipFilter{EntityID: n, At: at(epoch, 30)}, want: []int{1, 2, 3, 4, 5, 8}},
		{name: "EntityTypes", filter: graph.RelationshipFilter{EntityID: n, EntityTypes: []string{"person", "project"}}, want: []int{1, 2, 3, 8}},
		{name: "EntityTypesInbound", filter: graph.RelationshipFilter{EntityID: n, Direction: graph.Inbound, EntityTypes: []string{"org"}}, want: []int{4}},
		{name: "EntityTypesOfHubOnly", filter: graph.RelationshipFilter{EntityID: n, EntityTypes: []string{"hub"}}},
		{name: "EntityTypesEmpty", filter: graph.RelationshipFilter{EntityID: n, EntityTypes: []string{}}},
		{name: "EntityTypesAt", filter: graph.RelationshipFilter{EntityID: n, At: at(epoch, 10), EntityTypes: []string{"person"}}, want: []int{1, 3, 7}},
		{name: "FirstPage", filter: graph.RelationshipFilter{EntityID: n, Page: graph.Page{Limit: 2}}, want: []int{1, 2, 3, 4, 5, 8}, page: []int{0, 1}},
		{name: "MiddlePage", filter: graph.RelationshipFilter{EntityID: n, Page: graph.Page{Limit: 2, Offset: 2}}, want: []int{1, 2, 3, 4, 5, 8}, page: []int{2, 3}},
		{name: "LastPage", filter: graph.RelationshipFilter{EntityID: n, Page: graph.Page{Limit: 4, Offset: 4}}, want: []int{1, 2, 3, 4, 5, 8}, page: []int{4, 5}},
		{name: "PastTheEnd", filter: graph.RelationshipFilter{EntityID: n, Page: graph.Page{Limit: 2, Offset: 6}}, want: []int{1, 2, 3, 4, 5, 8}, page: []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.filter
			f.UserID = alice
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) (page[graph.Relationship], error) {
				return listed(tx.ListRelationships(ctx, f))
			})
			want := nb.listOrder(tc.want...)
			if tc.page != nil {
				all := want
				want = nil
				for _, i := range tc.page {
					want = append(want, all[i])
				}
			}
			diff(t, "ListRelationships", want, got.Rows)
			if got.Total != len(tc.want) {
				t.Errorf("ListRelationships total = %d, want %d", got.Total, len(tc.want))
			}
		})
	}
}

func testEdges(t *testing.T, newStore Harness) {
	s := newStore(t)
	nb := buildNeighbourhood(t, s)
	const n, a, b = "ent_alice_n", "ent_alice_a", "ent_alice_b"
	tests := []struct {
		name  string
		query graph.EdgeQuery
		want  []int
	}{
		{"None", graph.EdgeQuery{Direction: graph.Both}, nil},
		{"Both", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both}, []int{1, 2, 3, 4, 5, 8}},
		{"EmptyDirectionIsBoth", graph.EdgeQuery{EntityIDs: []string{n}}, []int{1, 2, 3, 4, 5, 8}},
		{"EdgeInsideTheSetOnce", graph.EdgeQuery{EntityIDs: []string{n, a}, Direction: graph.Both}, []int{1, 2, 3, 4, 5, 6, 8}},
		{"Outbound", graph.EdgeQuery{EntityIDs: []string{n, a}, Direction: graph.Outbound}, []int{1, 2, 5, 6, 8}},
		{"Inbound", graph.EdgeQuery{EntityIDs: []string{n, a}, Direction: graph.Inbound}, []int{1, 3, 4}},
		{"InboundOnly", graph.EdgeQuery{EntityIDs: []string{b}, Direction: graph.Inbound}, []int{2, 6}},
		{"OutboundOfTarget", graph.EdgeQuery{EntityIDs: []string{b}, Direction: graph.Outbound}, nil},
		{"Type", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both, Types: []string{graph.RefersTo}}, []int{1, 3, 5, 8}},
		{"Types", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both, Types: []string{graph.PartOf, graph.DependsOn}}, []int{2, 4}},
		{"UnknownType", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both, Types: []string{"MENTORS"}}, nil},
		{"AtBeforeEnd", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both, At: at(epoch, 10)}, []int{1, 2, 3, 4, 5, 7}},
		{"AtEnd", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Both, At: at(epoch, 12)}, []int{1, 2, 3, 4, 5}},
		{"AtCreation", graph.EdgeQuery{EntityIDs: []string{n}, Direction: graph.Outbound, At: at(epoch, 8)}, []int{1, 2, 5, 7}},
		{"MissingIDs", graph.EdgeQuery{EntityIDs: []string{"ent_alice_nope"}, Direction: graph.Both}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.query
			q.UserID = alice
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Edge, error) { return tx.Edges(ctx, q) })
			diff(t, "Edges", nb.edgeOrder(tc.want...), got)
		})
	}
	t.Run("ManyIDs", func(t *testing.T) {
		ids := make([]string, 0, 1201)
		for i := range 1200 {
			ids = append(ids, "ent_alice_missing_"+strconv.Itoa(i))
		}
		ids = append(ids, n)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]graph.Edge, error) {
			return tx.Edges(ctx, graph.EdgeQuery{UserID: alice, EntityIDs: ids, Direction: graph.Both})
		})
		diff(t, "Edges", nb.edgeOrder(1, 2, 3, 4, 5, 8), got)
	})
}
