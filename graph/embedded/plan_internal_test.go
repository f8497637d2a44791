package embedded

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
)

// TestLiveEdgeEndsIsCovered: the degree pass of a context load walks an
// index and reads no relationship row (migration 017).
func TestLiveEdgeEndsIsCovered(t *testing.T) {
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id, parent, unused int
	var plan string
	if err := db.Read.QueryRowContext(t.Context(), `EXPLAIN QUERY PLAN `+liveEdgeEnds, "usr_1").Scan(&id, &parent, &unused, &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "COVERING INDEX relationships_out") {
		t.Errorf("plan of the degree pass: %s; want a covering index", plan)
	}
}
