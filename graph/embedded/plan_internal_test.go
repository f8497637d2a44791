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

// TestEntitiesByIdentifierSeeksIDs: a lookup by name reads the entities
// its identifiers name by id, not every entity of the user.
func TestEntitiesByIdentifierSeeksIDs(t *testing.T) {
	db, err := sqlite.OpenFile(t.Context(), filepath.Join(t.TempDir(), "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{entitiesByIdentifier, entitiesByIdentifier + ` AND e.entity_type = $3`} {
		rows, err := db.Read.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+q+` ORDER BY e.id`, "usr_1", "ada lovelace", "person")
		if err != nil {
			t.Fatal(err)
		}
		var plans []string
		for rows.Next() {
			var id, parent, unused int
			var plan string
			if err := rows.Scan(&id, &parent, &unused, &plan); err != nil {
				t.Fatal(err)
			}
			plans = append(plans, plan)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(plans, "; "); !strings.Contains(plan, "SEARCH e USING INDEX sqlite_autoindex_entities_1 (id=?)") {
			t.Errorf("plan of a lookup by identifier: %s; want the entities sought by id", plan)
		}
	}
}
