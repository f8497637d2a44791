package embedded_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

func BenchmarkListEntityStats(b *testing.B) {
	graphtest.BenchmarkListEntityStats(b, openStore(b), nil)
}

// BenchmarkCycleCheck: see graphtest.BenchmarkCycleCheck.
func BenchmarkCycleCheck(b *testing.B) {
	graphtest.BenchmarkCycleCheck(b, func(tb testing.TB) graph.Driver { return embedded.New(sqlitetest.Open(tb)) })
}
