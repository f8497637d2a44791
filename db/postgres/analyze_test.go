package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// edgesOf is a cycle check's step: the live edges of one type out of one
// entity, which relationships_out answers.
const edgesOf = `SELECT target_entity_id FROM relationships
	WHERE user_id = $1 AND ended_at IS NULL AND relationship_type = $2 AND source_entity_id = $3`

// genericPlan is the plan a connection holds for edgesOf, prepared as pgx
// prepares every statement.
func genericPlan(t *testing.T, conn *pgxpool.Conn) string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `EXPLAIN EXECUTE edges_of('u', 'PART_OF', 'ent_1')`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// analyzed returns how many times ANALYZE ran on a table of the schema.
func analyzed(t *testing.T, db *postgres.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Pool.QueryRow(t.Context(), `SELECT analyze_count + autoanalyze_count FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname = $1`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAnalyzerKeepsPlansCurrent plans a statement on an empty table, as a
// connection does when Cairn starts on a new database, fills the table, and
// checks that the analyzer's ANALYZE made the connection plan it again for
// the table as it now is: with the index on the edge's source, rather than
// the plan made for the empty table, which walked every edge of the user
// (relationships_recent) for each lookup. Without the analyzer the old plan
// stays as long as the connection does.
func TestAnalyzerKeepsPlansCurrent(t *testing.T) {
	db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{AnalyzeEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{
		// As PostgreSQL chooses after five executions when the generic plan
		// looks no worse, which on an empty table it does not.
		`SET plan_cache_mode = force_generic_plan`,
		`PREPARE edges_of(text, text, text) AS ` + edgesOf,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	before := genericPlan(t, conn)
	if strings.Contains(before, "relationships_out") {
		t.Logf("the plan on the empty table already uses relationships_out; the test shows less than it should:\n%s", before)
	}

	// 20,000 edges of one user, each out of its own entity, written on
	// another connection, which reports them to the statistics system at
	// once (PostgreSQL 15 and later) rather than up to ten seconds later.
	writer, err := db.Pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Release()
	if _, err := writer.Exec(t.Context(), `INSERT INTO relationships
		(id, user_id, relationship_type, source_entity_id, target_entity_id, source_type, target_type,
		 metadata, provenance, observation_count, created_at, last_observation_at)
		SELECT 'rel_' || i, 'u', 'PART_OF', 'ent_' || i, 'ent_' || (i / 2), 'company', 'company',
		  '{}', '[]', 1, now(), now()
		FROM generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := writer.QueryRow(t.Context(), `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version >= 150000 {
		if _, err := writer.Exec(t.Context(), `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for analyzed(t, db, "relationships") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("relationships not analysed 30 s after 20,000 rows were written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := genericPlan(t, conn); !strings.Contains(after, "relationships_out") {
		t.Errorf("after ANALYZE the connection's plan does not use relationships_out:\n%s\n(before:\n%s)", after, before)
	}

	// Nothing changed since: more use of the pool analyses nothing again.
	n := analyzed(t, db, "relationships")
	for range 10 {
		if err := db.Pool.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if again := analyzed(t, db, "relationships"); again != n {
		t.Errorf("relationships analysed %d times more with no change", again-n)
	}
}
