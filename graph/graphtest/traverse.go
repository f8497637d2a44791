package graphtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// walkGraph is the graph the ShortestPath and Traverse tests read. With
// s as the start:
//
//	1 s -REFERS_TO->  a    (t=1)
//	2 s -PART_OF->    b    (t=2)
//	3 a -REFERS_TO->  c    (t=3)   c is two hops away by a and by b:
//	4 b -PART_OF->    c    (t=4)   a < b, so the path goes through a
//	5 c -DEPENDS_ON-> d    (t=5)
//	6 e -DEPENDS_ON-> s    (t=6)   the only edge into s
//	7 s -REFERS_TO->  x    (t=7)   x is a "secret": consent filters it,
//	8 x -REFERS_TO->  y    (t=8)   and y is reachable only through x
//	9 s -SETTLES->    f    (t=9, ended at t=15)
//	10 d -REFERS_TO-> a    (t=10)  closes a ring a → c → d → a
//	11 d -REFERS_TO-> z    (t=30)  created late
type walkGraph struct {
	links map[int]link
	types map[string]string // entity id → type
}

// walk ids, in id order: a < b < c < d < e < f < s < x < y < z.
const (
	wA, wB, wC, wD, wE = "ent_alice_w_a", "ent_alice_w_b", "ent_alice_w_c", "ent_alice_w_d", "ent_alice_w_e"
	wF, wS, wX, wY, wZ = "ent_alice_w_f", "ent_alice_w_s", "ent_alice_w_x", "ent_alice_w_y", "ent_alice_w_z"
)

func newWalkGraph() walkGraph {
	return walkGraph{
		links: map[int]link{
			1:  {graph.RefersTo, wS, wA, at(epoch, 1)},
			2:  {graph.PartOf, wS, wB, at(epoch, 2)},
			3:  {graph.RefersTo, wA, wC, at(epoch, 3)},
			4:  {graph.PartOf, wB, wC, at(epoch, 4)},
			5:  {graph.DependsOn, wC, wD, at(epoch, 5)},
			6:  {graph.DependsOn, wE, wS, at(epoch, 6)},
			7:  {graph.RefersTo, wS, wX, at(epoch, 7)},
			8:  {graph.RefersTo, wX, wY, at(epoch, 8)},
			9:  {graph.Settles, wS, wF, at(epoch, 9)},
			10: {graph.RefersTo, wD, wA, at(epoch, 10)},
			11: {graph.RefersTo, wD, wZ, at(epoch, 30)},
		},
		types: map[string]string{
			wA: "person", wB: "project", wC: "person", wD: "org", wE: "person",
			wF: "person", wS: "person", wX: "secret", wY: "person", wZ: "person",
		},
	}
}

// build stores the graph, creating the links in the given order (reverse
// when reverse is set): the result must not depend on it.
func (w walkGraph) build(t *testing.T, s *graph.Store, reverse bool) {
	t.Helper()
	var nodes []node
	for _, id := range slices.Sorted(mapKeys(w.types)) {
		nodes = append(nodes, node{id, w.types[id]})
	}
	var links []link
	for i := 1; i <= len(w.links); i++ {
		links = append(links, w.links[i])
	}
	if reverse {
		slices.Reverse(links)
		slices.Reverse(nodes)
	}
	buildGraph(t, s, alice, nodes, links)
	endLink(t, s, alice, w.links[9], at(epoch, 15))
}

// rel returns the id of link n.
func (w walkGraph) rel(n int) string { return w.links[n].relID() }

// reached is the Reached the traversal should report for id, along the
// entity path and the link numbers between its entities.
func (w walkGraph) reached(hops int, path []string, links ...int) graph.Reached {
	rels := make([]string, len(links))
	for i, n := range links {
		rels[i] = w.rel(n)
	}
	end := path[len(path)-1]
	return graph.Reached{EntityID: end, EntityType: w.types[end], Hops: hops, Path: path, RelationshipIDs: rels}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func testShortestPath(t *testing.T, newStore Harness) {
	s := newStore(t)
	w := newWalkGraph()
	w.build(t, s, false)
	tests := []struct {
		name string
		q    graph.PathQuery
		want []string
	}{
		{"Outbound", graph.PathQuery{From: wS, To: wZ, Direction: graph.Outbound}, []string{wS, wA, wC, wD, wZ}},
		{"Both", graph.PathQuery{From: wS, To: wZ, Direction: graph.Both}, []string{wS, wA, wD, wZ}},
		{"AgainstTheEdges", graph.PathQuery{From: wZ, To: wS, Direction: graph.Outbound}, nil},
		{"Inbound", graph.PathQuery{From: wZ, To: wS, Direction: graph.Inbound}, []string{wZ, wD, wC, wA, wS}},
		{"TieGoesToTheLowerID", graph.PathQuery{From: wS, To: wC, Direction: graph.Both}, []string{wS, wA, wC}},
		{"Types", graph.PathQuery{From: wS, To: wC, Direction: graph.Outbound, Types: []string{graph.PartOf}}, []string{wS, wB, wC}},
		{"TypesWithoutPath", graph.PathQuery{From: wS, To: wZ, Direction: graph.Both, Types: []string{graph.PartOf, graph.DependsOn}}, nil},
		{"Self", graph.PathQuery{From: wS, To: wS, Direction: graph.Outbound}, []string{wS}},
		{"EndedEdge", graph.PathQuery{From: wS, To: wF, Direction: graph.Both}, nil},
		{"EndedEdgeWhileLive", graph.PathQuery{From: wS, To: wF, Direction: graph.Both, At: at(epoch, 12)}, []string{wS, wF}},
		{"BeforeTheLastEdge", graph.PathQuery{From: wS, To: wZ, Direction: graph.Both, At: at(epoch, 20)}, nil},
		{"Missing", graph.PathQuery{From: wS, To: "ent_alice_w_missing", Direction: graph.Both}, nil},
		{"OtherUser", graph.PathQuery{UserID: bob, From: wS, To: wZ, Direction: graph.Both}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			if q.UserID == "" {
				q.UserID = alice
			}
			got := view(t, s, func(ctx context.Context, tx *graph.Tx) ([]string, error) { return tx.ShortestPath(ctx, q) })
			if tc.want == nil && got != nil {
				t.Errorf("ShortestPath = %v, want nil (no path)", got)
				return
			}
			diff(t, "ShortestPath", tc.want, got)
		})
	}
}

func testTraverse(t *testing.T, newStore Harness) {
	s := newStore(t)
	w := newWalkGraph()
	w.build(t, s, false)
	people := []string{"person", "project", "org"} // everything but the secret x

	tests := []struct {
		name string
		q    graph.TraverseQuery
		want []graph.Reached
		// edges are the link numbers of the relationships followed.
		edges []int
		hops  int
	}{
		{
			name: "DefaultIsOneHopBothWays", q: graph.TraverseQuery{},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2),
				w.reached(1, []string{wS, wE}, 6), w.reached(1, []string{wS, wX}, 7),
			},
			edges: []int{1, 2, 6, 7}, hops: 1,
		},
		{
			name: "TwoHops", q: graph.TraverseQuery{MaxHops: 2, Direction: graph.Both},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2),
				w.reached(1, []string{wS, wE}, 6), w.reached(1, []string{wS, wX}, 7),
				w.reached(2, []string{wS, wA, wC}, 1, 3), w.reached(2, []string{wS, wA, wD}, 1, 10),
				w.reached(2, []string{wS, wX, wY}, 7, 8),
			},
			edges: []int{1, 2, 3, 4, 6, 7, 8, 10}, hops: 2,
		},
		{
			name: "AllHopsBothWays", q: graph.TraverseQuery{MaxHops: 5},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2),
				w.reached(1, []string{wS, wE}, 6), w.reached(1, []string{wS, wX}, 7),
				w.reached(2, []string{wS, wA, wC}, 1, 3), w.reached(2, []string{wS, wA, wD}, 1, 10),
				w.reached(2, []string{wS, wX, wY}, 7, 8),
				w.reached(3, []string{wS, wA, wD, wZ}, 1, 10, 11),
			},
			edges: []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 11}, hops: 3,
		},
		{
			name: "MoreHopsThanTheLimit", q: graph.TraverseQuery{MaxHops: 50, Direction: graph.Outbound},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2), w.reached(1, []string{wS, wX}, 7),
				w.reached(2, []string{wS, wA, wC}, 1, 3), w.reached(2, []string{wS, wX, wY}, 7, 8),
				w.reached(3, []string{wS, wA, wC, wD}, 1, 3, 5),
				w.reached(4, []string{wS, wA, wC, wD, wZ}, 1, 3, 5, 11),
			},
			edges: []int{1, 2, 3, 4, 5, 7, 8, 10, 11}, hops: 4,
		},
		{
			name: "Inbound", q: graph.TraverseQuery{MaxHops: 5, Direction: graph.Inbound},
			want:  []graph.Reached{w.reached(1, []string{wS, wE}, 6)},
			edges: []int{6}, hops: 1,
		},
		{
			name: "RelationshipTypes", q: graph.TraverseQuery{MaxHops: 5, Types: []string{graph.PartOf, graph.DependsOn}},
			want: []graph.Reached{
				w.reached(1, []string{wS, wB}, 2), w.reached(1, []string{wS, wE}, 6),
				w.reached(2, []string{wS, wB, wC}, 2, 4),
				w.reached(3, []string{wS, wB, wC, wD}, 2, 4, 5),
			},
			edges: []int{2, 4, 5, 6}, hops: 3,
		},
		{
			name: "NoRelationshipTypes", q: graph.TraverseQuery{MaxHops: 5, Types: []string{}},
			want: []graph.Reached{},
		},
		{
			name: "EntityTypesNeverPassedThrough", q: graph.TraverseQuery{MaxHops: 5, EntityTypes: people},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2), w.reached(1, []string{wS, wE}, 6),
				w.reached(2, []string{wS, wA, wC}, 1, 3), w.reached(2, []string{wS, wA, wD}, 1, 10),
				w.reached(3, []string{wS, wA, wD, wZ}, 1, 10, 11),
			},
			edges: []int{1, 2, 3, 4, 5, 6, 10, 11}, hops: 3,
		},
		{
			name: "NoEntityTypes", q: graph.TraverseQuery{MaxHops: 5, EntityTypes: []string{}},
			want: []graph.Reached{},
		},
		{
			name: "AtWhileTheEndedEdgeLived", q: graph.TraverseQuery{MaxHops: 5, At: at(epoch, 12)},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2), w.reached(1, []string{wS, wE}, 6),
				w.reached(1, []string{wS, wF}, 9), w.reached(1, []string{wS, wX}, 7),
				w.reached(2, []string{wS, wA, wC}, 1, 3), w.reached(2, []string{wS, wA, wD}, 1, 10),
				w.reached(2, []string{wS, wX, wY}, 7, 8),
			},
			edges: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, hops: 2,
		},
		{
			name: "AtEarly", q: graph.TraverseQuery{MaxHops: 5, At: at(epoch, 5)},
			want: []graph.Reached{
				w.reached(1, []string{wS, wA}, 1), w.reached(1, []string{wS, wB}, 2),
				w.reached(2, []string{wS, wA, wC}, 1, 3),
				w.reached(3, []string{wS, wA, wC, wD}, 1, 3, 5),
			},
			edges: []int{1, 2, 3, 4, 5}, hops: 3,
		},
		{
			name: "AtBeforeEverything", q: graph.TraverseQuery{MaxHops: 5, At: epoch},
			want: []graph.Reached{},
		},
		{
			name: "Isolated", q: graph.TraverseQuery{Start: wZ, MaxHops: 5, Direction: graph.Outbound},
			want: []graph.Reached{},
		},
	}
	run := func(t *testing.T, s *graph.Store, q graph.TraverseQuery) graph.TraverseResult {
		t.Helper()
		q.UserID = alice
		if q.Start == "" {
			q.Start = wS
		}
		return view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.TraverseResult, error) { return tx.Traverse(ctx, q) })
	}
	// A second store holds the same graph, built in the reverse order.
	reversed := newStore(t)
	w.build(t, reversed, true)

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, s, tc.q)
			diff(t, "Traverse entities", tc.want, got.Entities)
			var wantEdges []string
			for _, n := range tc.edges {
				wantEdges = append(wantEdges, w.rel(n))
			}
			slices.Sort(wantEdges)
			diff(t, "Traverse relationships", wantEdges, idsOf(got.Relationships, func(e graph.Edge) string { return e.ID }))
			for _, e := range got.Relationships {
				if e.SourceType != w.types[e.SourceEntityID] || e.TargetType != w.types[e.TargetEntityID] {
					t.Errorf("edge %s has endpoint types %s → %s, want %s → %s", e.ID, e.SourceType, e.TargetType,
						w.types[e.SourceEntityID], w.types[e.TargetEntityID])
				}
			}
			if got.HopsTraversed != tc.hops || got.Truncated {
				t.Errorf("HopsTraversed %d, Truncated %v; want %d, false", got.HopsTraversed, got.Truncated, tc.hops)
			}
			diff(t, "Traverse of the same graph built in reverse order", got, run(t, reversed, tc.q))
			diff(t, "Traverse run again", got, run(t, s, tc.q))
		})
	}

	t.Run("Caps", func(t *testing.T) {
		all := run(t, s, graph.TraverseQuery{MaxHops: 5})
		for _, tc := range []struct {
			name string
			q    graph.TraverseQuery
			want int
		}{
			{"MaxResults", graph.TraverseQuery{MaxHops: 5, MaxResults: 3}, 3},
			{"MaxResultsAcrossHops", graph.TraverseQuery{MaxHops: 5, MaxResults: 6}, 6},
			{"MaxVisitedCountsTheStart", graph.TraverseQuery{MaxHops: 5, MaxVisited: 3}, 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := run(t, s, tc.q)
				if !got.Truncated || len(got.Entities) != tc.want {
					t.Fatalf("Traverse = %d entities, truncated %v; want %d, truncated", len(got.Entities), got.Truncated, tc.want)
				}
				// The capped answer is the uncapped one cut short, and the
				// same on every run and backend order.
				diff(t, "capped entities", all.Entities[:tc.want], got.Entities)
				diff(t, "capped traversal of the reverse-built graph", got, run(t, reversed, tc.q))
				for _, e := range got.Relationships {
					if !slices.ContainsFunc(all.Relationships, func(x graph.Edge) bool { return x.ID == e.ID }) {
						t.Errorf("capped traversal followed %s, which the full one did not", e.ID)
					}
				}
			})
		}
		exact := run(t, s, graph.TraverseQuery{MaxHops: 5, MaxResults: len(all.Entities)})
		if exact.Truncated || len(exact.Entities) != len(all.Entities) {
			t.Errorf("MaxResults equal to the answer's size: %d entities, truncated %v; want %d, not truncated",
				len(exact.Entities), exact.Truncated, len(all.Entities))
		}
	})

	t.Run("MissingStart", func(t *testing.T) {
		err := tryView(t, s, func(ctx context.Context, tx *graph.Tx) error {
			_, err := tx.Traverse(ctx, graph.TraverseQuery{UserID: alice, Start: "ent_alice_w_missing", MaxHops: 2})
			return err
		})
		wantNotFoundError(t, "Traverse from a missing entity", err, "ent_alice_w_missing")
	})

	t.Run("Wide", func(t *testing.T) {
		// A hub with more neighbours than one query of Edges would carry
		// in a single round trip on some backends.
		s := newStore(t)
		const n = 1500
		nodes := []node{{"ent_alice_hub", "hub"}}
		var links []link
		for i := range n {
			id := fmt.Sprintf("ent_alice_spoke_%04d", i)
			nodes = append(nodes, node{id, "spoke"})
			links = append(links, link{graph.RefersTo, "ent_alice_hub", id, at(epoch, 1)})
		}
		putBulk(t, s, nodes, links)
		got := view(t, s, func(ctx context.Context, tx *graph.Tx) (graph.TraverseResult, error) {
			return tx.Traverse(ctx, graph.TraverseQuery{UserID: alice, Start: "ent_alice_hub", MaxHops: 3})
		})
		if len(got.Entities) != graph.DefaultMaxResults || !got.Truncated {
			t.Errorf("hub of %d spokes: %d entities, truncated %v; want %d, truncated", n, len(got.Entities), got.Truncated, graph.DefaultMaxResults)
		}
		for i := 1; i < len(got.Entities); i++ {
			if got.Entities[i-1].EntityID >= got.Entities[i].EntityID {
				t.Fatalf("entities of one hop out of id order at %d: %s, %s", i, got.Entities[i-1].EntityID, got.Entities[i].EntityID)
			}
		}
	})
}

// putBulk stores nodes and links in one transaction with the bulk writes
// (PutEntities, CreateRelationships, which the BulkWrites and
// BulkRelationships cases prove equal to their one-row counterparts), for
// graphs too large to build an edge per transaction or per statement.
func putBulk(t *testing.T, s *graph.Store, nodes []node, links []link) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *graph.Tx) error {
		ents := make([]graph.Entity, len(nodes))
		for i, n := range nodes {
			ents[i] = newEntity(alice, n.id, n.typ, epoch)
		}
		if err := tx.PutEntities(ctx, ents); err != nil {
			return err
		}
		ins := make([]graph.NewRelationship, len(links))
		for i, l := range links {
			ins[i] = graph.NewRelationship{UserID: alice, Type: l.typ, SourceEntityID: l.src, TargetEntityID: l.dst, Now: l.at}
		}
		created, err := tx.CreateRelationships(ctx, ins)
		if err != nil {
			return err
		}
		for _, c := range created {
			if c.Err != nil {
				return c.Err
			}
		}
		return nil
	})
}
