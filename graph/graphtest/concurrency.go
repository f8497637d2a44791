package graphtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// testConcurrentCycles races writers that together could close cycles of an
// acyclic type: every ordered pair of a few nodes at once (A→B beside B→A,
// and every ring A→B, B→C, C→A from different goroutines). Each call must
// either succeed or fail with a cycle error, and the graph left behind must
// be acyclic, by the suite's own depth-first search.
func testConcurrentCycles(t *testing.T, newStore Harness) {
	s := newStore(t)
	const nodesPerSet, sets = 6, 2
	var nodes []node
	for set := range sets {
		for i := range nodesPerSet {
			nodes = append(nodes, node{fmt.Sprintf("ent_alice_s%d_n%d", set, i), "thing"})
		}
	}
	buildGraph(t, s, alice, nodes, nil)
	types := acyclicTypes()
	for round := range len(types) * sets {
		typ, set := types[round%len(types)], round/len(types)
		t.Run(fmt.Sprintf("Round%d_%s", round, typ), func(t *testing.T) {
			ids := make([]string, nodesPerSet)
			for i := range ids {
				ids[i] = fmt.Sprintf("ent_alice_s%d_n%d", set, i)
			}
			raceEdges(t, s, typ, ids)
		})
	}
}

// raceEdges creates every ordered pair of ids, plus two duplicates, as edges
// of the acyclic type typ from concurrent goroutines, and checks the outcome.
func raceEdges(t *testing.T, s *graph.Store, typ string, ids []string) {
	type job struct {
		src, dst string
		created  bool
		err      error
	}
	var jobs []*job
	for _, a := range ids {
		for _, b := range ids {
			if a != b {
				jobs = append(jobs, &job{src: a, dst: b})
			}
		}
	}
	jobs = append(jobs, &job{src: ids[0], dst: ids[1]}, &job{src: ids[1], dst: ids[2]})

	ctx := t.Context()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			<-start
			j.err = s.Update(ctx, func(tx *graph.Tx) error {
				_, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{
					UserID: alice, Type: typ, SourceEntityID: j.src, TargetEntityID: j.dst,
				})
				j.created = created
				return err
			})
		})
	}
	close(start)
	wg.Wait()

	adj := liveAdjacency(t, s, typ, ids)
	edges := map[[2]string]bool{}
	for src, dsts := range adj {
		for _, dst := range dsts {
			edges[[2]string{src, dst}] = true
		}
	}
	created, refused := 0, 0
	for _, j := range jobs {
		var cycle *graph.CycleError
		switch {
		case j.err == nil:
			if j.created {
				created++
			}
			if !edges[[2]string{j.src, j.dst}] {
				t.Errorf("%s → %s succeeded but is not a live edge", j.src, j.dst)
			}
		case errors.As(j.err, &cycle) && errors.Is(j.err, graph.ErrCycle):
			refused++
			checkCyclePath(t, j.src, j.dst, cycle.Path, edges)
		default:
			t.Errorf("%s → %s: err = %v, want nil or a cycle error", j.src, j.dst, j.err)
		}
	}
	if refused == 0 {
		t.Errorf("no call was refused with a cycle error, want at least one")
	}
	if created != len(edges) {
		t.Errorf("%d calls report created, %d live edges stored", created, len(edges))
	}
	if c := findCycle(adj); c != nil {
		t.Errorf("stored %s graph has the cycle %v", typ, c)
	}
}

// checkCyclePath fails the test unless path leads from dst to src over
// edges: with src → dst, it closes a cycle.
func checkCyclePath(t *testing.T, src, dst string, path []string, edges map[[2]string]bool) {
	t.Helper()
	if len(path) < 2 || path[0] != dst || path[len(path)-1] != src {
		t.Errorf("%s → %s refused with path %v, want a path from %s to %s", src, dst, path, dst, src)
		return
	}
	for i := 1; i < len(path); i++ {
		if !edges[[2]string{path[i-1], path[i]}] {
			t.Errorf("%s → %s refused with path %v, but %s → %s is not an edge", src, dst, path, path[i-1], path[i])
		}
	}
}

// liveAdjacency reads the live outbound edges of typ from each of ids.
func liveAdjacency(t *testing.T, s *graph.Store, typ string, ids []string) map[string][]string {
	t.Helper()
	return view(t, s, func(ctx context.Context, tx *graph.Tx) (map[string][]string, error) {
		adj := map[string][]string{}
		for _, id := range ids {
			rels, total, err := tx.ListRelationships(ctx, graph.RelationshipFilter{
				UserID: alice, EntityID: id, Direction: graph.Outbound, Type: typ, Page: graph.Page{Limit: 1000},
			})
			if err != nil {
				return nil, err
			}
			if total != len(rels) {
				return nil, fmt.Errorf("ListRelationships of %s: %d rows, total %d", id, len(rels), total)
			}
			for _, r := range rels {
				if r.Type != typ || r.SourceEntityID != id {
					return nil, fmt.Errorf("ListRelationships outbound %s of %s returned %s -%s-> %s", typ, id, r.SourceEntityID, r.Type, r.TargetEntityID)
				}
				adj[id] = append(adj[id], r.TargetEntityID)
			}
		}
		return adj, nil
	})
}
