package graphtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/graph"
)

// WithoutReacher hides a driver's graph.Reacher, so that the cycle check
// falls back to Tx.ShortestPath (one query per hop): the portable baseline
// a push-down is measured against.
type WithoutReacher struct{ graph.Driver }

// Update runs fn with a transaction that has only graph.DriverTx's methods.
func (d WithoutReacher) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.Driver.Update(ctx, func(tx graph.DriverTx) error { return fn(plainTx{tx}) })
}

// plainTx has only the methods of graph.DriverTx.
type plainTx struct{ graph.DriverTx }

var errRollback = errors.New("roll back")

// BenchmarkCycleCheck measures CreateRelationship's cycle check on a chain
// n0 → n1 → … of PART_OF edges (an acyclic graph of up to 10,000 edges),
// as the driver does it (with its transaction's graph.Reacher, where it has
// one: a recursive query or a Cypher pattern) and with the
// breadth-first search of Tx.ShortestPath. Free adds z → n0, which closes
// no cycle but makes the check walk the whole chain; Cycle adds
// n_last → n0, which is refused with the chain as the path. Each operation
// is one write transaction, rolled back. newDriver returns an empty driver
// of the backend; the benchmark closes it.
//
//	go test -run '^$' -bench CycleCheck -benchtime 20x ./graph/<driver>/
func BenchmarkCycleCheck(b *testing.B, newDriver func(testing.TB) graph.Driver) {
	for _, n := range []int{100, 1000, 10_000} {
		d := newDriver(b)
		b.Cleanup(func() { _ = d.Close() })
		chain := make([]string, n)
		for i := range chain {
			chain[i] = fmt.Sprintf("ent_alice_n%05d", i)
		}
		ctx := b.Context()
		err := graph.NewStore(d).Update(ctx, func(tx *graph.Tx) error {
			for _, id := range append(slices.Clone(chain), "ent_alice_z") {
				if err := tx.PutEntity(ctx, graph.Entity{
					ID: id, UserID: alice, Type: "thing", CanonicalName: id, SchemaVersion: "1",
					LastObservationAt: epoch, CreatedAt: epoch, ComputedAt: epoch,
				}); err != nil {
					return err
				}
			}
			for i := 1; i < n; i++ {
				if err := tx.PutRelationship(ctx, graph.Relationship{
					ID: graph.RelationshipID(graph.PartOf, chain[i-1], chain[i]), UserID: alice, Type: graph.PartOf,
					SourceEntityID: chain[i-1], TargetEntityID: chain[i], CreatedAt: epoch, LastObservationAt: epoch,
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name string
			d    graph.Driver
		}{{"Driver", d}, {"BFS", WithoutReacher{d}}} {
			for _, c := range []struct {
				name, src, dst string
				cycle          bool
			}{{"Free", "ent_alice_z", chain[0], false}, {"Cycle", chain[n-1], chain[0], true}} {
				b.Run(fmt.Sprintf("edges=%d/%s/%s", n-1, c.name, mode.name), func(b *testing.B) {
					s := graph.NewStore(mode.d)
					for b.Loop() {
						err := s.Update(ctx, func(tx *graph.Tx) error {
							_, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
								UserID: alice, Type: graph.PartOf, SourceEntityID: c.src, TargetEntityID: c.dst,
							})
							if err != nil {
								return err
							}
							return errRollback
						})
						var cycle *graph.CycleError
						switch {
						case c.cycle && errors.As(err, &cycle) && len(cycle.Path) == n:
						case !c.cycle && errors.Is(err, errRollback):
						default:
							b.Fatalf("CreateRelationship %s → %s: %v", c.src, c.dst, err)
						}
					}
				})
			}
		}
	}
}
