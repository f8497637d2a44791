package cypher

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lintDir returns the directory of the npm packages the tests run
// (cmd/cairn/testdata/node, installed by scripts/provision-node.sh), or
// skips (fails under CI=true) when Node.js or Neo4j's Cypher front end is
// missing.
func lintDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "cmd", "cairn", "testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@neo4j-cypher", "language-support", "package.json")); err != nil {
		missing = "@neo4j-cypher/language-support is not installed"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; scripts/provision-node.sh installs it", missing)
		}
		t.Skipf("%s; run scripts/provision-node.sh (scripts/test does)", missing)
	}
	return dir
}

// lintDiagnostic is one diagnostic lint-cypher.mjs reports.
type lintDiagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// lint runs Neo4j's Cypher front end over files against the schema in
// testdata/schema.json and returns its diagnostics.
func lint(t *testing.T, files ...string) []lintDiagnostic {
	t.Helper()
	dir := lintDir(t)
	schema, err := filepath.Abs(filepath.Join("testdata", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", append([]string{"lint-cypher.mjs", schema}, files...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lint-cypher.mjs: %v\n%s", err, stderr.String())
	}
	var out struct {
		Files       int              `json:"files"`
		Diagnostics []lintDiagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("lint-cypher.mjs printed %q: %v", stdout.String(), err)
	}
	if out.Files != len(files) {
		t.Fatalf("lint-cypher.mjs checked %d files, want %d", out.Files, len(files))
	}
	return out.Diagnostics
}

// mistakes are statements with one mistake each that the lint must find,
// so that it is never vacuous.
var mistakes = map[string]string{
	"property":  "MATCH (e:Entity {user_id: $userId, id: $id}) RETURN e.canonical_nmae",
	"label":     "MATCH (e:Entiy {user_id: $userId, id: $id}) RETURN e.id",
	"type":      "MATCH (:Entity {user_id: $userId})-[r:PART_0F]->(:Entity) RETURN r.id",
	"parameter": "MATCH (e:Entity {user_id: $userID, id: $id}) RETURN e.id",
	"syntax":    "MATCH (e:Entity {user_id: $userId) RETURN e.id",
	// What lintCypherQuery itself lets through and lint-cypher.mjs checks.
	"projection": "MATCH (e:Entity {user_id: $userId, id: $id}) RETURN e {.id, .canonical_nmae} AS entity",
	"set":        "MATCH (e:Entity {user_id: $userId, id: $id}) SET e.canonical_nmae = $id",
	"set_label":  "MATCH (e:Entity {user_id: $userId, id: $id}) SET e:Compnay",
}

// TestLint checks every statement, rendered as the driver renders it, and
// every Neo4j migration with Neo4j's own Cypher front end: syntax, semantic
// analysis, and every label, relationship type, property key and parameter
// against testdata/schema.json. Any diagnostic, warnings included, fails.
// The same run proves the lint is not vacuous: each of mistakes must give
// a diagnostic. (One run of node: loading the front end is most of its
// time.)
func TestLint(t *testing.T) {
	dir := t.TempDir()
	var files []string
	write := func(name, text string) {
		f := filepath.Join(dir, name+".cypher")
		if err := os.WriteFile(f, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for _, name := range Names() {
		s := Must(name)
		text, err := s.Render(sampleFill(s))
		if err != nil {
			t.Fatal(err)
		}
		write(name, text)
	}
	for name, text := range mistakes {
		write("mistake_"+name, text)
	}
	migrations, err := filepath.Glob(filepath.Join("..", "migrations", "neo4j", "*.cypher"))
	if err != nil || len(migrations) == 0 {
		t.Fatalf("no Neo4j migrations found: %v", err)
	}
	for _, m := range migrations {
		abs, err := filepath.Abs(m)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, abs)
	}
	caught := map[string]bool{}
	for _, d := range lint(t, files...) {
		where := d.File
		if rel, err := filepath.Rel(dir, d.File); err == nil && !strings.HasPrefix(rel, "..") {
			name := strings.TrimSuffix(rel, ".cypher")
			if m, ok := strings.CutPrefix(name, "mistake_"); ok {
				caught[m] = true
				continue
			}
			where = "statement " + name + " (rendered, comments stripped)"
		}
		t.Errorf("%s:%d:%d: %s: %s", where, d.Line, d.Column, d.Severity, d.Message)
	}
	for name, text := range mistakes {
		if !caught[name] {
			t.Errorf("the lint found nothing wrong with the misspelt %s in %q", name, text)
		}
	}
}
