package migrations

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCypher(t *testing.T) {
	all, err := LoadCypher()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0].Version != 1 {
		t.Fatalf("LoadCypher() = %+v, want migrations from 001", all)
	}
	for i, m := range all {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %03d: versions must follow each other", i, m.Version)
		}
		for _, s := range m.Statements {
			// Waiting for an index to be online changes nothing, and a
			// migration that builds one waits for it before dropping the
			// index it replaces.
			idempotent := strings.Contains(s, "IF NOT EXISTS") ||
				strings.HasPrefix(s, "DROP ") && strings.Contains(s, " IF EXISTS") ||
				strings.HasPrefix(s, "CALL db.awaitIndex(")
			if !idempotent {
				t.Errorf("%03d_%s: %q is not idempotent (CREATE … IF NOT EXISTS, DROP … IF EXISTS, CALL db.awaitIndex)", m.Version, m.Name, s)
			}
			if strings.HasSuffix(s, ";") || strings.Contains(s, "//") {
				t.Errorf("%03d_%s: statement %q kept a semicolon or a comment", m.Version, m.Name, s)
			}
		}
	}
}

func TestSplitCypher(t *testing.T) {
	body := "// header\n// more\nCREATE INDEX a IF NOT EXISTS\nFOR (n:A) ON (n.x);\n\n  // note\nCREATE INDEX b IF NOT EXISTS FOR (n:B) ON (n.y);  \nRETURN 'a;b'\n"
	want := []string{
		"CREATE INDEX a IF NOT EXISTS\nFOR (n:A) ON (n.x)",
		"CREATE INDEX b IF NOT EXISTS FOR (n:B) ON (n.y)",
		"RETURN 'a;b'",
	}
	if diff := cmp.Diff(want, SplitCypher(body)); diff != "" {
		t.Errorf("SplitCypher (-want +got):\n%s", diff)
	}
	if got := SplitCypher("// only a comment\n\n"); len(got) != 0 {
		t.Errorf("SplitCypher of comments = %q", got)
	}
}
