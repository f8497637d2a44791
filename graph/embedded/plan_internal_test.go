package embedded

import (
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
)

// TestEntityQueriesSeekIDs: the queries that read or clear what belongs
// to a few entities find those entities' rows id by id, not by walking
// every row of the user through an index that has the user first. Each
// such walk made a call cost time in proportion to the store.
func TestEntityQueriesSeekIDs(t *testing.T) {
	db := sqlitetest.Open(t)
	entityTimeline, entityTimelineArgs := timelineCond(graph.TimelineFilter{UserID: "usr_1", EntityID: "ent_1", EventType: "date"})
	for _, c := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"lookup by identifier", entitiesByIdentifier + ` ORDER BY e.id`, []any{"usr_1", "ada lovelace"},
			"SEARCH e USING INDEX sqlite_autoindex_entities_1 (id=?)"},
		{"lookup by identifier of a type", entitiesByIdentifier + ` AND e.entity_type = $3 ORDER BY e.id`, []any{"usr_1", "ada lovelace", "person"},
			"SEARCH e USING INDEX sqlite_autoindex_entities_1 (id=?)"},
		{"clear timelines", clearTimelines + `?, ?)`, []any{"usr_1", "ent_1", "ent_2"},
			"SEARCH timeline_events USING INDEX timeline_events_entity (entity_id=?)"},
		{"an entity's timeline", `SELECT t.id FROM timeline_events t WHERE ` + entityTimeline + ` ORDER BY t.event_time DESC, t.id ASC LIMIT 10 OFFSET 0`,
			entityTimelineArgs, "SEARCH t USING INDEX timeline_events_entity (entity_id=?)"},
		{"export identifiers", identifiersOfEntities + `?, ?)`, []any{"usr_1", "ent_1", "ent_2"},
			"SEARCH entity_identifiers USING COVERING INDEX entity_identifiers_user_entity (user_id=? AND entity_id=?)"},
		{"export timelines", timelinesOfEntities + `?, ?)`, []any{"usr_1", "ent_1", "ent_2"},
			"SEARCH timeline_events USING INDEX timeline_events_entity (entity_id=?)"},
	} {
		// The Write handle: one of the statements is a delete.
		plan, err := sqlite.QueryPlan(t.Context(), db.Write, c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(plan, c.want) {
			t.Errorf("plan of %s: %s; want %s", c.name, plan, c.want)
		}
	}
}
