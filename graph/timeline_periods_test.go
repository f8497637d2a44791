package graph_test

import (
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// TestTimelinePeriodsWithoutIndex holds the portable walk, which a driver
// without graph.TimelinePeriodLister gets, to the contract the indexes
// keep.
func TestTimelinePeriodsWithoutIndex(t *testing.T) {
	graphtest.RunTimelinePeriods(t, func(t *testing.T) *graph.Store {
		t.Helper()
		return graph.NewStore(withoutSearch{embedded.New(sqlitetest.Open(t))})
	})
}
