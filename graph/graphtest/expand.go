package graphtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
)

// testExpand checks the optional graph.Expander capability on random graphs
// of several entity types, with cycles, self-loops, several edge types,
// ended edges and as-of times: Tx.Traverse, which uses the driver's
// ExpandEdges, gives exactly what Tx.TraverseByHop (the portable traversal,
// one Edges call a hop: the oracle) gives, for every direction, depth, set
// of relationship types, set of readable entity types and cap; and
// ExpandEdges itself returns no edge with an end, other than the start,
// that the query's entity types exclude. A driver without the capability
// skips it.
func testExpand(t *testing.T, newStore Harness) {
	ctx := t.Context()
	s := newStore(t)
	const user = "alice"
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(8, 3))
	const nodes, edges = 40, 160
	entityTypes := []string{"person", "company", "note"}
	ids := make([]string, nodes)
	typeOf := map[string]string{}
	for i := range ids {
		ids[i] = fmt.Sprintf("ent_alice_%02d", rng.IntN(100)*100+i) // ids not in creation order
		typeOf[ids[i]] = entityTypes[rng.IntN(len(entityTypes))]
	}
	relTypes := []string{graph.PartOf, graph.RefersTo, "MENTORS"}
	err := s.Update(ctx, func(tx *graph.Tx) error {
		if _, ok := tx.DriverTx.(graph.Expander); !ok {
			return errNoExpander
		}
		for _, id := range ids {
			if err := tx.PutEntity(ctx, plainEntity(user, id, typeOf[id], epoch)); err != nil {
				return err
			}
		}
		for i := range edges {
			created := epoch.Add(time.Duration(rng.IntN(10)) * time.Hour)
			var ended time.Time
			if rng.IntN(4) == 0 {
				ended = created.Add(time.Duration(1+rng.IntN(5)) * time.Hour)
			}
			typ, src, dst := relTypes[rng.IntN(len(relTypes))], ids[rng.IntN(nodes)], ids[rng.IntN(nodes)]
			if i%30 == 0 {
				dst = src // a self-loop now and then
			}
			if err := tx.PutRelationship(ctx, plainRelationship(user, typ, src, dst, created, ended)); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoExpander) {
		t.Skip("the driver offers no graph.Expander")
	}
	if err != nil {
		t.Fatal(err)
	}
	relTypeSets := [][]string{nil, {graph.PartOf}, {graph.RefersTo, "MENTORS"}, {}}
	entityTypeSets := [][]string{nil, {"person", "company"}, {"note"}, {}}
	ats := []time.Time{{}, epoch.Add(3 * time.Hour)}
	caps := [][2]int{{0, 0}, {5, 0}, {0, 3}}
	deep := 0
	err = s.View(ctx, func(tx *graph.Tx) error {
		expander := tx.DriverTx.(graph.Expander)
		// Every direction, set of readable types and depth; the
		// relationship types, the time and the cap drawn at random.
		for _, dir := range []graph.Direction{graph.Outbound, graph.Inbound, graph.Both} {
			for _, ets := range entityTypeSets {
				for hops := 1; hops <= graph.MaxHopsLimit; hops++ {
					for range 2 {
						c := caps[rng.IntN(len(caps))]
						q := graph.TraverseQuery{
							UserID: user, Start: ids[rng.IntN(nodes)], Direction: dir, Types: relTypeSets[rng.IntN(len(relTypeSets))],
							MaxHops: hops, At: ats[rng.IntN(len(ats))], EntityTypes: ets, MaxVisited: c[0], MaxResults: c[1],
						}
						want, err := tx.TraverseByHop(ctx, q)
						if err != nil {
							return err
						}
						got, err := tx.Traverse(ctx, q)
						if err != nil {
							return err
						}
						if d := cmp.Diff(want, got); d != "" {
							t.Errorf("Traverse(%+v) differs from TraverseByHop (-want +got):\n%s", q, d)
						}
						if want.HopsTraversed >= 2 {
							deep++
						}
						if ets == nil {
							continue
						}
						read, err := expander.ExpandEdges(ctx, q)
						if err != nil {
							return err
						}
						for _, e := range read {
							for _, end := range [][2]string{{e.SourceEntityID, e.SourceType}, {e.TargetEntityID, e.TargetType}} {
								if end[0] != q.Start && !slices.Contains(ets, end[1]) {
									t.Errorf("ExpandEdges(%+v) returned %s, whose end %s is a %s", q, e.ID, end[0], end[1])
								}
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if deep < 15 {
		t.Errorf("only %d traversals went two hops or more; the test proves little", deep)
	}
	// A start that does not exist is the same error both ways.
	err = s.View(ctx, func(tx *graph.Tx) error {
		q := graph.TraverseQuery{UserID: user, Start: "ent_alice_missing", MaxHops: 2}
		_, want := tx.TraverseByHop(ctx, q)
		_, got := tx.Traverse(ctx, q)
		if fmt.Sprint(want) != fmt.Sprint(got) || want == nil {
			t.Errorf("missing start: Traverse says %v, TraverseByHop %v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errNoExpander = errors.New("graphtest: no graph.Expander")
