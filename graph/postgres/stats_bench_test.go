package postgres_test

import (
	"testing"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	"github.com/cairnkg/cairn/graph/postgres"
)

func BenchmarkListEntityStats(b *testing.B) {
	db, err := dbpostgres.Open(b.Context(), pgtest.URL(b), dbpostgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := graph.NewStore(postgres.New(db.Pool))
	graphtest.BenchmarkListEntityStats(b, s, func(b *testing.B) {
		if _, err := db.Pool.Exec(b.Context(), `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	})
}
