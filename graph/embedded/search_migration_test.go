package embedded_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/cairnkg/cairn/migrations"
)

// TestSearchMigrationBackfills checks that migration 009 indexes the
// entities stored before it, and that the triggers it adds index those
// written after.
func TestSearchMigrationBackfills(t *testing.T) {
	db, exec, migration := migratedBefore(t, 9)
	insert := `INSERT INTO entities (id, user_id, entity_type, canonical_name, schema_version, snapshot, provenance,
		observation_count, last_observation_at, created_at, computed_at, merged_into) VALUES ($1, 'u', 'person', $2, '1', $3, '{}', 1, 0, 0, 0, $4)`
	exec(insert, "ent_old", "Quill 004216", `{"email":"quill@acme.example","n":[7]}`, nil)
	exec(insert, "ent_old_merged", "Quill Merged", `{}`, "ent_old")
	exec(migration)
	exec(insert, "ent_new", "Quill 004217", `{"city":"Lyon"}`, nil)

	find := func(match string) []string {
		t.Helper()
		rows, err := db.QueryContext(t.Context(), `SELECT d.entity_id FROM entity_search JOIN entity_search_docs d ON d.doc = entity_search.rowid
			WHERE entity_search MATCH $1 AND d.merged = 0 ORDER BY d.entity_id`, match)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	for match, want := range map[string][]string{
		`"quill"`:         {"ent_new", "ent_old"},
		`"acme" "7"`:      {"ent_old"},
		`"004216"`:        {"ent_old"},
		`"lyon"`:          {"ent_new"},
		`"merged"`:        nil,
		`"u" OR "person"`: nil, // user and type are filters, not text
	} {
		if got := find(match); !slices.Equal(got, want) {
			t.Errorf("MATCH %s = %v, want %v", match, got, want)
		}
	}
}

// migratedBefore returns a new SQLite database with every migration before
// version applied, a function that executes a statement on it or fails
// the test, and the SQL of that migration, for a test to store what a
// store held before it, then apply it.
func migratedBefore(t *testing.T, version int) (db *sql.DB, exec func(q string, args ...any), migration string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	all, err := migrations.Load(migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(m migrations.Migration) bool { return m.Version == version })
	if i < 0 {
		t.Fatalf("no migration %03d", version)
	}
	exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, m := range all[:i] {
		exec(m.SQL)
	}
	return db, exec, all[i].SQL
}
