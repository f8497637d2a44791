package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed neo4j/*.cypher
var cypherFiles embed.FS

var cypherFileName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.cypher$`)

// CypherMigration is one numbered schema change of the graph in Neo4j
// (neo4j/NNN_name.cypher). Neo4j runs a schema command in a transaction of
// its own, so a file is a list of statements that the runner (in
// graph/neo4j) runs one transaction each; every one is idempotent (IF NOT
// EXISTS), so that a file interrupted half way runs again from the start.
type CypherMigration struct {
	Version    int
	Name       string
	Statements []string
}

// LoadCypher returns the Neo4j migrations, ordered by version. Two files
// with the same version, a file whose name is not NNN_name.cypher, or one
// without a statement, are errors.
func LoadCypher() ([]CypherMigration, error) {
	entries, err := fs.ReadDir(cypherFiles, "neo4j")
	if err != nil {
		return nil, fmt.Errorf("migrations: neo4j: %w", err)
	}
	var out []CypherMigration
	for _, e := range entries {
		m := cypherFileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: neo4j/%s: name must be NNN_name.cypher", e.Name())
		}
		body, err := cypherFiles.ReadFile(path.Join("neo4j", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", e.Name(), err)
		}
		stmts := SplitCypher(string(body))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migrations: neo4j/%s has no statement", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		out = append(out, CypherMigration{Version: v, Name: m[2], Statements: stmts})
	}
	slices.SortFunc(out, func(a, b CypherMigration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations: neo4j: version %03d used twice", out[i].Version)
		}
	}
	return out, nil
}

// SplitCypher splits a migration file into its statements: they end with a
// semicolon at the end of a line, and lines that are only a // comment are
// dropped. (A semicolon inside a line, as in a string, does not split.)
func SplitCypher(body string) []string {
	var out []string
	var cur []string
	flush := func() {
		if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
			out = append(out, s)
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "//") {
			continue
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(line, " \t\r"), ";"); ok {
			cur = append(cur, s)
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}
