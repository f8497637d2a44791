package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
)

const user = "alice"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

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

// BenchmarkCycleCheck: see graphtest.BenchmarkCycleCheck.
func BenchmarkCycleCheck(b *testing.B) { graphtest.BenchmarkCycleCheck(b, newDriver) }
