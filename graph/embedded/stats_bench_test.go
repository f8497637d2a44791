package embedded_test

import (
	"testing"

	"github.com/cairnkg/cairn/graph/graphtest"
)

func BenchmarkListEntityStats(b *testing.B) {
	graphtest.BenchmarkListEntityStats(b, openStore(b), nil)
}
