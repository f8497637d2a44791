package cypher

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sampleFill is what the tests fill each placeholder with.
func sampleFill(s Statement) Fill {
	var f Fill
	for _, p := range s.Placeholders() {
		switch p {
		case labelPlaceholder:
			f.EntityType = "company"
		case relTypePlaceholder:
			f.RelType = "PART_OF"
		case maxHopsPlaceholder:
			f.MaxHops = 64
		}
	}
	return f
}

func TestEveryStatementLoadsAndRenders(t *testing.T) {
	names := Names()
	if len(names) < 40 {
		t.Fatalf("only %d statements: %v", len(names), names)
	}
	for _, name := range names {
		s, err := Load(name)
		if err != nil {
			t.Errorf("Load(%q): %v", name, err)
			continue
		}
		text, err := s.Render(sampleFill(s))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if rest := regexp.MustCompile(`__[A-Z_]+__`).FindString(text); rest != "" {
			t.Errorf("%s: %s left after Render: only %s, %s and %s are placeholders", name, rest, labelPlaceholder, relTypePlaceholder, maxHopsPlaceholder)
		}
		if strings.HasSuffix(strings.TrimSpace(text), ";") {
			t.Errorf("%s: a statement file holds one statement, without a closing semicolon", name)
		}
	}
}

func TestLoadUnknown(t *testing.T) {
	for _, name := range []string{"no_such_statement", "", "../doc", "Entity_get", "statements/entity_get"} {
		if _, err := Load(name); err == nil {
			t.Errorf("Load(%q) succeeded", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Must of an unknown name did not panic")
		}
	}()
	Must("no_such_statement")
}

func TestRender(t *testing.T) {
	put := Must("entities_put")
	got, err := put.Render(Fill{EntityType: "bank_account"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "e:BankAccount") || strings.Contains(got, labelPlaceholder) {
		t.Errorf("entities_put rendered without its label:\n%s", got)
	}

	tests := []struct {
		name string
		stmt string
		fill Fill
	}{
		{"label missing", "entities_put", Fill{}},
		{"label invalid", "entities_put", Fill{EntityType: "Company"}},
		{"label reserved", "entities_put", Fill{EntityType: "source"}},
		{"label injected", "entities_put", Fill{EntityType: "company SET e.user_id = 'other'"}},
		{"label not used", "entity_get", Fill{EntityType: "company"}},
		{"type missing", "relationship_put", Fill{}},
		{"type invalid", "relationship_put", Fill{RelType: "part_of"}},
		{"type injected", "relationship_put", Fill{RelType: "PART_OF]->(t) DETACH DELETE t //"}},
		{"type not used", "entities_put", Fill{EntityType: "company", RelType: "PART_OF"}},
		{"hops missing", "reach_hops_directed", Fill{}},
		{"hops negative", "reach_hops_directed", Fill{MaxHops: -1}},
		{"hops too many", "reach_hops_directed", Fill{MaxHops: MaxHopsLimit + 1}},
		{"hops not used", "entity_get", Fill{MaxHops: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := Must(tt.stmt).Render(tt.fill); err == nil {
				t.Fatalf("%s.Render(%+v) succeeded:\n%s", tt.stmt, tt.fill, got)
			}
		})
	}
	if _, err := Must("entities_put").Cypher(); err == nil {
		t.Error("Cypher() of a statement with a placeholder succeeded")
	}
	if _, err := Must("entity_get").Cypher(); err != nil {
		t.Errorf("Cypher() of entity_get: %v", err)
	}
}

// TestScopedToUser checks that every statement but those CrossUser lists
// takes the user's id, and that CrossUser names only statements that exist.
func TestScopedToUser(t *testing.T) {
	for _, name := range Names() {
		text := Must(name).Text()
		_, cross := CrossUser[name]
		if !cross && !strings.Contains(text, "$userId") {
			t.Errorf("%s does not filter by $userId; add the filter, or say in CrossUser why it must not", name)
		}
		if !cross && !strings.Contains(text, "user_id") {
			t.Errorf("%s never names user_id", name)
		}
	}
	for name := range CrossUser {
		if _, err := Load(name); err != nil {
			t.Errorf("CrossUser names %s: %v", name, err)
		}
	}
}

var (
	// varLength finds the quantifier of a variable-length relationship
	// pattern: a * inside [ ] (Cypher's [*], [r:T*2..], [*..5] …).
	varLength = regexp.MustCompile(`\[[^\[\]]*\*([^\[\]]*)\]`)
	// bounded is a quantifier with both a lower and an upper bound.
	bounded = regexp.MustCompile(`^\s*\d+\s*\.\.\s*(\d+|__MAX_HOPS__)\s*$`)
	// quantifiedPath finds a quantified path pattern (Neo4j 5.9+): a
	// parenthesised pattern followed by +, * or {m,n}.
	quantifiedPath = regexp.MustCompile(`\)\s*(\+|\*|\{\s*\d*\s*,\s*(\d*)\s*\})`)
)

// TestVariableLengthPatternsAreBounded checks every statement and migration
// for variable-length patterns without an upper bound: on a user's graph
// of any size, an unbounded pattern has no cost limit.
func TestVariableLengthPatternsAreBounded(t *testing.T) {
	for name, text := range allCypher(t) {
		for _, m := range varLength.FindAllStringSubmatch(text, -1) {
			if !bounded.MatchString(m[1]) {
				t.Errorf("%s: variable-length pattern %s has no upper bound (write *1..N)", name, m[0])
			}
		}
		for _, m := range quantifiedPath.FindAllStringSubmatch(text, -1) {
			if m[1] == "+" || m[1] == "*" || m[2] == "" {
				t.Errorf("%s: quantified path %s has no upper bound", name, m[0])
			}
		}
	}
	// The checks themselves.
	for _, bad := range []string{"(a)-[*]->(b)", "(a)-[:T*1..]->(b)", "(a)-[r*2]->(b)", "(a)-[*..5]->(b)"} {
		m := varLength.FindStringSubmatch(bad)
		if m == nil || bounded.MatchString(m[1]) {
			t.Errorf("the bound check passes %s", bad)
		}
	}
	for _, bad := range []string{"((a)-->(b))+", "((a)-->(b)){1,}"} {
		m := quantifiedPath.FindStringSubmatch(bad)
		if m == nil || !(m[1] == "+" || m[1] == "*" || m[2] == "") {
			t.Errorf("the bound check passes %s", bad)
		}
	}
}

// allCypher returns the text of every statement (comments stripped) and
// every migration file, by name.
func allCypher(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range Names() {
		out[name] = Must(name).Text()
	}
	files, err := filepath.Glob(filepath.Join("..", "migrations", "neo4j", "*.cypher"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Neo4j migrations found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = stripComments(string(b))
	}
	return out
}

// TestNamesUsedInGoExist finds every call of cypher.Load and cypher.Must in
// the module and checks that its name is a string literal naming a
// statement that exists: a misspelt name fails here, not in production.
func TestNamesUsedInGoExist(t *testing.T) {
	root := filepath.Join("..")
	calls := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := f.Name.Name == "cypher" && filepath.Clean(filepath.Dir(path)) == filepath.Join(root, "cypher")
		alias := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/cairnkg/cairn/cypher"` {
				alias = "cypher"
				if imp.Name != nil {
					alias = imp.Name.Name
				}
			}
		}
		if alias == "" && !local {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			fn := ""
			switch x := call.Fun.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == alias {
					fn = x.Sel.Name
				}
			case *ast.Ident:
				if local {
					fn = x.Name
				}
			}
			if fn != "Must" && fn != "Load" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				if !local {
					t.Errorf("%s: cypher.%s takes a string literal, so that this test can check it", fset.Position(call.Pos()), fn)
				}
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			calls++
			if !slices.Contains(Names(), name) {
				// The package's own tests load unknown names on purpose.
				if !(local && strings.HasSuffix(fset.Position(call.Pos()).Filename, "_test.go")) {
					t.Errorf("%s: no statement %q", fset.Position(call.Pos()), name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("found no call of cypher.Must or cypher.Load")
	}
}
