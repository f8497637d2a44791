package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// TestLayersDoNotStarveEachOther holds every connection the graph's pool
// allows in transactions, and has each read the control plane and the
// vectors before it ends, as a store reads the schema registry and an
// entity search the stored entity embeddings: those reads get
// connections of their own pools. In one pool they waited for the
// transactions, which waited for them, until their deadline.
func TestLayersDoNotStarveEachOther(t *testing.T) {
	db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	n := int(db.Pool.Config().MaxConns)
	var began, wg sync.WaitGroup
	began.Add(n)
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				began.Done()
				errs <- err
				return
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			began.Done()
			began.Wait() // every connection of the graph's pool is held
			var one int
			if err := db.SQL.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
				errs <- err
				return
			}
			var v pgvector.Vector
			if err := db.Vectors.QueryRow(ctx, `SELECT '[1,2,3]'::vector`).Scan(&v); err != nil {
				errs <- err
				return
			}
			errs <- tx.Commit(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a read outside a transaction, with the graph's pool all held: %v", err)
		}
	}
}
