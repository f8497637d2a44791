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

// testReach checks the optional graph.Reacher capability on random graphs
// with cycles, several edge types, ended edges and as-of times: Reach gives
// exactly the path Tx.ShortestPath (the portable search, the oracle) gives,
// in every direction. A driver without the capability skips it.
func testReach(t *testing.T, newStore Harness) {
	ctx := t.Context()
	s := newStore(t)
	const user = "alice"
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(4, 2))
	const nodes, edges = 24, 60
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("ent_alice_%02d", rng.IntN(100)*100+i) // ids not in creation order
	}
	types := []string{graph.PartOf, graph.RefersTo, "MENTORS"}
	err := s.Update(ctx, func(tx *graph.Tx) error {
		if _, ok := tx.DriverTx.(graph.Reacher); !ok {
			return errNoReacher
		}
		for _, id := range ids {
			if err := tx.PutEntity(ctx, plainEntity(user, id, "thing", epoch)); err != nil {
				return err
			}
		}
		for range edges {
			created := epoch.Add(time.Duration(rng.IntN(10)) * time.Hour)
			var ended time.Time
			if rng.IntN(4) == 0 {
				ended = created.Add(time.Duration(1+rng.IntN(5)) * time.Hour)
			}
			typ, src, dst := types[rng.IntN(len(types))], ids[rng.IntN(nodes)], ids[rng.IntN(nodes)]
			if err := tx.PutRelationship(ctx, plainRelationship(user, typ, src, dst, created, ended)); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoReacher) {
		t.Skip("the driver offers no graph.Reacher")
	}
	if err != nil {
		t.Fatal(err)
	}
	typeSets := [][]string{nil, {graph.PartOf}, {graph.PartOf, "MENTORS"}, {}}
	ats := []time.Time{{}, epoch.Add(3 * time.Hour), epoch.Add(-time.Hour)}
	found := 0
	err = s.View(ctx, func(tx *graph.Tx) error {
		reacher := tx.DriverTx.(graph.Reacher)
		for _, dir := range []graph.Direction{graph.Outbound, graph.Inbound, graph.Both} {
			for _, typs := range typeSets {
				for _, at := range ats {
					for range 12 {
						q := graph.PathQuery{UserID: user, From: ids[rng.IntN(nodes)], To: ids[rng.IntN(nodes)], Types: typs, Direction: dir, At: at}
						want, err := tx.ShortestPath(ctx, q)
						if err != nil {
							return err
						}
						got, err := reacher.Reach(ctx, q)
						if err != nil {
							return err
						}
						if d := cmp.Diff(want, got); d != "" {
							t.Errorf("Reach(%+v) differs from ShortestPath (-want +got):\n%s", q, d)
						}
						if len(want) > 2 {
							found++
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
	if found == 0 {
		t.Error("no query had a path of two hops or more; the test proves little")
	}
}

var errNoReacher = errors.New("graphtest: no graph.Reacher")
