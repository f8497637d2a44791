package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
)

const user = "alice"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// withoutReacher hides the driver's graph.Reacher, so that the cycle check
// falls back to Tx.ShortestPath: the baseline the benchmark compares with.
type withoutReacher struct{ graph.Driver }

func (d withoutReacher) Update(ctx context.Context, fn func(graph.DriverTx) error) error {
	return d.Driver.Update(ctx, func(tx graph.DriverTx) error { return fn(plainTx{tx}) })
}

// plainTx has only the methods of graph.DriverTx.
type plainTx struct{ graph.DriverTx }

func putEntities(ctx context.Context, tx *graph.Tx, ids ...string) error {
	for _, id := range ids {
		if err := tx.PutEntity(ctx, graph.Entity{
			ID: id, UserID: user, Type: "thing", CanonicalName: id, SchemaVersion: "1",
			LastObservationAt: epoch, CreatedAt: epoch, ComputedAt: epoch,
		}); err != nil {
			return err
		}
	}
	return nil
}

func putEdge(ctx context.Context, tx *graph.Tx, typ, src, dst string, created, ended time.Time) error {
	return tx.PutRelationship(ctx, graph.Relationship{
		ID: graph.RelationshipID(typ, src, dst), UserID: user, Type: typ,
		SourceEntityID: src, TargetEntityID: dst, CreatedAt: created, LastObservationAt: created, EndedAt: ended,
	})
}

var errRollback = errors.New("roll back")

// BenchmarkCycleCheck measures CreateRelationship's cycle check on a chain
// n0 → n1 → … of PART_OF edges, with the driver's recursive query (Reacher)
// and with the breadth-first search of Tx.ShortestPath (one query per hop).
// Free adds z → n0, which closes no cycle but makes the check walk the whole
// chain; Cycle adds n_last → n0, which is refused with the chain as the path.
// Each operation is one write transaction, rolled back.
func BenchmarkCycleCheck(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		d := newDriver(b)
		chain := make([]string, n)
		for i := range chain {
			chain[i] = fmt.Sprintf("ent_n%04d", i)
		}
		ctx := b.Context()
		err := graph.NewStore(d).Update(ctx, func(tx *graph.Tx) error {
			if err := putEntities(ctx, tx, append(slices.Clone(chain), "ent_z")...); err != nil {
				return err
			}
			for i := 1; i < n; i++ {
				if err := putEdge(ctx, tx, graph.PartOf, chain[i-1], chain[i], epoch, time.Time{}); err != nil {
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
			s    *graph.Store
		}{{"Reacher", graph.NewStore(d)}, {"BFS", graph.NewStore(withoutReacher{d})}} {
			for _, c := range []struct {
				name, src, dst string
				cycle          bool
			}{{"Free", "ent_z", chain[0], false}, {"Cycle", chain[n-1], chain[0], true}} {
				b.Run(fmt.Sprintf("chain=%d/%s/%s", n, c.name, mode.name), func(b *testing.B) {
					for b.Loop() {
						err := mode.s.Update(ctx, func(tx *graph.Tx) error {
							_, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{
								UserID: user, Type: graph.PartOf, SourceEntityID: c.src, TargetEntityID: c.dst,
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
