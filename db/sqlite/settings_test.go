package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestConnectionSettings checks the pragmas every connection of both
// handles runs with: a setting lost from dsn would go unnoticed by every
// other test but cost durability (synchronous, foreign_keys) or speed.
func TestConnectionSettings(t *testing.T) {
	db, err := OpenFile(t.Context(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	want := map[string]string{
		"journal_mode": "wal",
		"synchronous":  "1", // NORMAL
		"foreign_keys": "1",
		"temp_store":   "2", // MEMORY
		"busy_timeout": "10000",
	}
	for name, h := range map[string]*sql.DB{"write": db.Write, "read": db.Read} {
		for pragma, v := range want {
			var got string
			if err := h.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", name, pragma, err)
			}
			if got != v {
				t.Errorf("%s: PRAGMA %s = %s, want %s", name, pragma, got, v)
			}
		}
	}
}
