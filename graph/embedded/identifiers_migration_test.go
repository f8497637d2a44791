package embedded_test

import (
	"slices"
	"testing"
)

// TestIdentifiersMigrationKeepsThem checks that migration 018, which
// rebuilds entity_identifiers clustered on its key, keeps every identifier
// stored before it, and that the table takes new ones as before.
func TestIdentifiersMigrationKeepsThem(t *testing.T) {
	db, exec, migration := migratedBefore(t, 18)
	insert := `INSERT INTO entity_identifiers (user_id, value, entity_id, field) VALUES ($1, $2, $3, $4)`
	exec(insert, "u", "quill 004216", "ent_a", "name")
	exec(insert, "u", "quill@acme.example", "ent_a", "email")
	exec(insert, "v", "quill 004216", "ent_b", "name")
	exec(migration)
	exec(insert, "u", "ada", "ent_c", "name")
	if _, err := db.ExecContext(t.Context(), insert, "u", "ada", "ent_c", "name"); err == nil {
		t.Error("the same identifier was stored twice")
	}

	rows, err := db.QueryContext(t.Context(), `SELECT user_id || ' ' || entity_id || ' ' || field || ' ' || value
		FROM entity_identifiers ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{"u ent_a email quill@acme.example", "u ent_a name quill 004216", "u ent_c name ada", "v ent_b name quill 004216"}
	if !slices.Equal(got, want) {
		t.Errorf("identifiers after the migration:\n got %q\nwant %q", got, want)
	}
}
