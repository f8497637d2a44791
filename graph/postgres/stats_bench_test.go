package postgres_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	"github.com/cairnkg/cairn/graph/postgres"
)

func BenchmarkListEntityStats(b *testing.B) {
	db := openDB(b, pgtest.URL(b))
	graphtest.BenchmarkListEntityStats(b, graph.NewStore(postgres.New(db.Pool)), func(b *testing.B) {
		if _, err := db.Pool.Exec(b.Context(), `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	})
}
