package neo4j_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/migrations"
)

// docsPage is the page whose examples TestDocsExamples runs.
const docsPage = "../../docs/neo4j.md"

// TestDocsExamples runs every Cypher example of docs/neo4j.md against a live
// server, on a small graph written through the knowledge service (so it has
// the shape production writes), with the parameters the page tells the user
// to set, and checks that each returns what the page says it returns.
//
// The examples are the ```cypher blocks of the page, in order; a block of
// several statements has one per line, each ending with ';', and '//'
// starts a comment. An example added to the page without a check here
// fails the test.
func TestDocsExamples(t *testing.T) {
	stmts := docsStatements(t)
	if len(stmts) != len(docsExamples) {
		t.Fatalf("%s has %d Cypher statements, the test checks %d: give a new example a check of its answer in docsExamples", docsPage, len(stmts), len(docsExamples))
	}
	srv := take(t)
	g := buildDocsGraph(t, srv)
	for i, ex := range docsExamples {
		t.Run(ex.name, func(t *testing.T) {
			stmt := stmts[i]
			if !strings.Contains(stmt, ex.marker) {
				t.Fatalf("statement %d of %s is not the %s example (no %q):\n%s", i+1, docsPage, ex.name, ex.marker, stmt)
			}
			ex.check(t, g, func(params map[string]any) [][]any {
				t.Helper()
				res, err := neo4j.ExecuteQuery(t.Context(), srv.Driver, stmt, params,
					neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
				if err != nil {
					t.Fatalf("%s:\n%s\n%v", ex.name, stmt, err)
				}
				rows := make([][]any, len(res.Records))
				for j, rec := range res.Records {
					rows[j] = rec.Values
				}
				return rows
			})
		})
	}
}

// docsStatements returns the statements of the page's ```cypher blocks,
// comments removed, in order.
func docsStatements(t *testing.T) []string {
	t.Helper()
	page, err := os.ReadFile(docsPage)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []string
		block   []string
		inBlock bool
	)
	for line := range strings.Lines(string(page)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case !inBlock && strings.TrimSpace(line) == "```cypher":
			inBlock, block = true, nil
		case inBlock && strings.TrimSpace(line) == "```":
			inBlock = false
			out = append(out, splitStatements(block)...)
		case inBlock:
			if before, _, ok := strings.Cut(line, "//"); ok {
				line = before
			}
			block = append(block, strings.TrimRight(line, " \t"))
		}
	}
	if inBlock {
		t.Fatalf("%s: a ```cypher block is not closed", docsPage)
	}
	return out
}

// splitStatements cuts a block at the lines that end with ';'; a block
// without one is one statement.
func splitStatements(lines []string) []string {
	var out, cur []string
	flush := func() {
		if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
			out = append(out, s)
		}
		cur = nil
	}
	for _, l := range lines {
		if s, ok := strings.CutSuffix(l, ";"); ok {
			cur = append(cur, s)
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// docsGraph is the graph the examples run on, and what the service says
// about it: the answers the examples must agree with.
type docsGraph struct {
	user  string
	ids   map[string]string // canonical name → entity id
	names map[string]string // entity id → canonical name

	// source is the store call of the four companies and Acme Corp's
	// unknown field; sourceSaid lists what it produced, as "Observation
	// id → entity id" and "RawFragment field → <nil>".
	source     string
	sourceSaid []string

	// ada's email was given by two sources; prov is what the service
	// says of its provenance.
	ada  string
	prov knowledge.FieldProvenance

	// cycle is the refused PART_OF edge from Acme Global to Acme Corp:
	// the path (canonical names) that CYCLE_DETECTED reported.
	cycleFrom, cycleTo string
	cycle              []string

	// Relationship ids live at mid (before acmeGlobal ended and before
	// noteAcme was made) and at late (after both).
	mid, late         time.Time
	liveMid, liveLate []string
}

// docsClock is the service's clock: it moves only when told, so that the
// as-of example can name times between writes.
type docsClock struct{ now time.Time }

func (c *docsClock) Now() time.Time { return c.now }

// buildDocsGraph writes, as user alice:
//
//   - companies Acme Corp, Acme Holdings, Acme Group and Acme Global in one
//     store call, Acme Corp with a field no schema names (a raw fragment);
//   - Ada Lovelace, whose email two sources give: the one stored first says
//     it was extracted later, so it wins although it is not the last;
//   - Augusta King, with Ada's winning email (a shared identifier);
//   - the note Q3 plan;
//   - Acme Corp PART_OF Acme Global, ended after mid; Ada PART_OF Acme
//     Corp; the chain Acme Corp PART_OF Acme Holdings PART_OF Acme Group
//     PART_OF Acme Global; Q3 plan REFERS_TO Acme Corp, made after mid;
//   - then tries Acme Global PART_OF Acme Corp, which closes a cycle.
func buildDocsGraph(t *testing.T, srv *neo4jtest.Server) *docsGraph {
	t.Helper()
	ctx := t.Context()
	clk := &docsClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	tick := func() { clk.now = clk.now.Add(time.Minute) }
	svc := knowledge.NewService(graph.NewStore(graphneo4j.New(srv.Driver, srv.Config.Database)), schema.NewRegistry(),
		knowledge.Options{Now: clk.Now})
	alice := knowledge.Caller{UserID: "alice", AgentID: "docs"}
	g := &docsGraph{user: alice.UserID, ids: map[string]string{}, names: map[string]string{}}

	store := func(req knowledge.StoreRequest) knowledge.StoreResult {
		t.Helper()
		tick()
		res, err := svc.Store(ctx, alice, req)
		if err != nil {
			t.Fatalf("store: %v", err)
		}
		for i, e := range res.Entities {
			name, _ := req.Entities[i]["name"].(string)
			if name == "" {
				name, _ = req.Entities[i]["title"].(string)
			}
			g.ids[name], g.names[e.EntityID] = e.EntityID, name
		}
		return res
	}
	companies := store(knowledge.StoreRequest{Entities: []map[string]any{
		{"entity_type": "company", "name": "Acme Corp", "domain": "acme.example", "ticker": "ACME"},
		{"entity_type": "company", "name": "Acme Holdings"},
		{"entity_type": "company", "name": "Acme Group"},
		{"entity_type": "company", "name": "Acme Global"},
	}})
	g.source = companies.Source.ID
	for _, e := range companies.Entities {
		g.sourceSaid = append(g.sourceSaid, "Observation "+e.ObservationID+" → "+e.EntityID)
	}
	g.sourceSaid = append(g.sourceSaid, "RawFragment ticker → <nil>")
	first := store(knowledge.StoreRequest{
		Entities:   []map[string]any{{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@acme.example"}},
		Provenance: map[string]any{"extracted_at": "2026-02-20T00:00:00Z"},
	})
	second := store(knowledge.StoreRequest{
		Entities:   []map[string]any{{"entity_type": "person", "name": "Ada Lovelace", "email": "ada.lovelace@old.example"}},
		Provenance: map[string]any{"extracted_at": "2026-01-10T00:00:00Z"},
	})
	store(knowledge.StoreRequest{Entities: []map[string]any{
		{"entity_type": "person", "name": "Augusta King", "email": "ada@acme.example"},
		{"entity_type": "note", "title": "Q3 plan"},
	}})
	g.ada = g.ids["Ada Lovelace"]
	if first.Entities[0].EntityID != g.ada || second.Entities[0].EntityID != g.ada {
		t.Fatalf("the two stores of Ada Lovelace made two entities: %s and %s", first.Entities[0].EntityID, second.Entities[0].EntityID)
	}
	var err error
	if g.prov, err = svc.FieldProvenance(ctx, alice, g.ada, "email"); err != nil {
		t.Fatal(err)
	}
	if g.prov.Source.ID != first.Source.ID {
		t.Fatalf("email won from source %s, want the first store's %s (extracted later): the graph does not test what it means to", g.prov.Source.ID, first.Source.ID)
	}

	relate := func(typ, from, to string) graph.Relationship {
		t.Helper()
		tick()
		rel, _, err := svc.CreateRelationship(ctx, alice, knowledge.RelationshipRequest{Type: typ, SourceEntityID: g.ids[from], TargetEntityID: g.ids[to]})
		if err != nil {
			t.Fatalf("%s %s %s: %v", from, typ, to, err)
		}
		return rel
	}
	acmeGlobal := relate(graph.PartOf, "Acme Corp", "Acme Global")
	var live []string
	for _, r := range [][2]string{
		{"Ada Lovelace", "Acme Corp"}, {"Acme Corp", "Acme Holdings"}, {"Acme Holdings", "Acme Group"}, {"Acme Group", "Acme Global"},
	} {
		live = append(live, relate(graph.PartOf, r[0], r[1]).ID)
	}
	tick()
	g.mid = clk.now
	g.liveMid = append([]string{acmeGlobal.ID}, live...)
	tick()
	if _, err := svc.DeleteRelationship(ctx, alice, graph.PartOf, g.ids["Acme Corp"], g.ids["Acme Global"]); err != nil {
		t.Fatal(err)
	}
	noteAcme := relate(graph.RefersTo, "Q3 plan", "Acme Corp")
	tick()
	g.late = clk.now
	g.liveLate = append(live, noteAcme.ID)

	g.cycleFrom, g.cycleTo = g.ids["Acme Global"], g.ids["Acme Corp"]
	tick()
	_, _, err = svc.CreateRelationship(ctx, alice, knowledge.RelationshipRequest{Type: graph.PartOf, SourceEntityID: g.cycleFrom, TargetEntityID: g.cycleTo})
	var cycle *graph.CycleError
	if !errors.As(err, &cycle) {
		t.Fatalf("Acme Global PART_OF Acme Corp: err = %v, want a *graph.CycleError", err)
	}
	for _, id := range cycle.Path {
		g.cycle = append(g.cycle, g.names[id])
	}

	// The page says a deployment's search index is ONLINE; on a server
	// migrated a moment ago it may still be populating.
	_, err = neo4j.ExecuteQuery(ctx, srv.Driver, "CALL db.awaitIndexes(300)", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// docsQuery runs the statement under test with params and returns its rows.
type docsQuery func(params map[string]any) [][]any

// docsExamples are the page's statements, in order, each with what the
// page says it returns.
var docsExamples = []struct {
	name   string
	marker string // a piece of the statement that tells which example it is
	check  func(t *testing.T, g *docsGraph, run docsQuery)
}{
	{"neighbourhood", "[rels*1..2]", checkNeighbourhood},
	{"provenance", "PRODUCED]->(o:Observation", checkProvenance},
	{"source", "OPTIONAL MATCH (x)-[:OBSERVES]", checkSource},
	{"cycle", "shortestPath", checkCycle},
	{"shared identifier", "Identifier", checkSharedIdentifiers},
	{"as of", "created_at <=", checkAsOf},
	{"constraints", "SHOW CONSTRAINTS", checkConstraints},
	{"search index", "SHOW INDEXES", checkSearchIndex},
	{"migrations", "CairnMigration", checkMigrations},
	{"version", "dbms.components", checkVersion},
}

// checkNeighbourhood: paths of one or two live relationships from Acme
// Corp to entities, through entities only. Acme Global is one ended hop
// away and three live ones; Acme Corp is found under its name twice, so
// two IDENTIFIED_BY edges lead from it back to it.
func checkNeighbourhood(t *testing.T, g *docsGraph, run docsQuery) {
	reached := map[string]bool{}
	for _, row := range run(map[string]any{"userId": g.user}) {
		p, ok := row[0].(neo4j.Path)
		if !ok {
			t.Fatalf("row %v, want a path", row)
		}
		walk := pathNodes(p)
		for _, n := range walk {
			if !slices.Contains(n.Labels, "Entity") {
				t.Errorf("path %s goes through %v, not an entity", describePath(walk), n.Labels)
			}
		}
		for _, r := range p.Relationships {
			if r.Props["user_id"] != g.user || r.Props["ended_at"] != nil {
				t.Errorf("path %s uses %s %v, not a live relationship of %s", describePath(walk), r.Type, r.Props, g.user)
			}
		}
		if walk[0].Props["canonical_name"] != "Acme Corp" {
			t.Errorf("path %s does not start at Acme Corp", describePath(walk))
		}
		reached[fmt.Sprint(walk[len(walk)-1].Props["canonical_name"])] = true
	}
	want := map[string]bool{"Ada Lovelace": true, "Acme Holdings": true, "Acme Group": true, "Q3 plan": true}
	if diff := cmp.Diff(want, reached); diff != "" {
		t.Errorf("entities reached (-want +got):\n%s", diff)
	}
}

// pathNodes returns the nodes of p in the order it walks them (the
// driver's Path.Nodes lists each node once).
func pathNodes(p neo4j.Path) []neo4j.Node {
	byID := map[string]neo4j.Node{}
	for _, n := range p.Nodes {
		byID[n.ElementId] = n
	}
	walk := []neo4j.Node{p.Nodes[0]}
	for _, r := range p.Relationships {
		next := r.EndElementId
		if next == walk[len(walk)-1].ElementId {
			next = r.StartElementId
		}
		walk = append(walk, byID[next])
	}
	return walk
}

func describePath(walk []neo4j.Node) string {
	var parts []string
	for _, n := range walk {
		parts = append(parts, fmt.Sprintf("%v%v", n.Labels, n.Props["canonical_name"]))
	}
	return strings.Join(parts, "-")
}

// checkProvenance: one row, the email that won, the observation that gave
// it and its source, as the service's FieldProvenance names them.
func checkProvenance(t *testing.T, g *docsGraph, run docsQuery) {
	rows := run(map[string]any{"userId": g.user, "entityId": g.ada})
	if len(rows) != 1 || len(rows[0]) != 7 {
		t.Fatalf("rows = %v, want one of 7 columns", rows)
	}
	r := rows[0]
	got := []any{r[0], r[1], r[2], r[4], r[5]}
	want := []any{g.prov.Value, g.prov.Observation.ID, g.prov.Observation.ObservedAt, g.prov.Source.ID, g.prov.Source.Kind}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("email, observation id, observed_at, source id, kind (-want +got):\n%s", diff)
	}
	if fields, _ := r[3].(string); !strings.Contains(fields, `"email":"ada@acme.example"`) {
		t.Errorf("fields_json = %v, want the winning email in it", r[3])
	}
}

// checkSource: one row per node the source produced, with the entity an
// observation observes (none for a raw fragment).
func checkSource(t *testing.T, g *docsGraph, run docsQuery) {
	var got []string
	for _, row := range run(map[string]any{"userId": g.user, "sourceId": g.source}) {
		s, _ := row[0].(neo4j.Node)
		x, _ := row[1].(neo4j.Node)
		if s.Props["id"] != g.source {
			t.Errorf("row of source %v, want %s", s.Props["id"], g.source)
		}
		e, _ := row[2].(neo4j.Node) // nil when x observes nothing
		line := fmt.Sprintf("%s %v → %v", strings.Join(x.Labels, ":"), x.Props["id"], e.Props["id"])
		if slices.Contains(x.Labels, "RawFragment") { // its id is not in the store's result
			line = fmt.Sprintf("RawFragment %v → %v", x.Props["field"], e.Props["id"])
		}
		got = append(got, line)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(g.sourceSaid))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the source said (-want +got):\n%s", diff)
	}
}

// checkCycle: the path is the one CYCLE_DETECTED reported for the refused
// edge; the ended Acme Corp PART_OF Acme Global, a shorter way, is not.
func checkCycle(t *testing.T, g *docsGraph, run docsQuery) {
	rows := run(map[string]any{"userId": g.user, "from": g.cycleFrom, "to": g.cycleTo})
	want := [][]any{{toAny(g.cycle)}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("cycle (-want +got):\n%s", diff)
	}
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// checkSharedIdentifiers: only Ada's email, which Augusta King shares; an
// entity is not counted twice for the two fields that find it under one
// value (its name).
func checkSharedIdentifiers(t *testing.T, g *docsGraph, run docsQuery) {
	got := map[any][]string{}
	for _, row := range run(map[string]any{"userId": g.user}) {
		names, _ := row[1].([]any)
		var ns []string
		for _, n := range names {
			ns = append(ns, fmt.Sprint(n))
		}
		slices.Sort(ns)
		got[row[0]] = ns
	}
	want := map[any][]string{knowledge.NormalizeIdentifier("ada@acme.example"): {"Ada Lovelace", "Augusta King"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shared identifiers (-want +got):\n%s", diff)
	}
}

// checkAsOf: at mid, Acme Corp PART_OF Acme Global (ended since) is there
// and Q3 plan REFERS_TO Acme Corp (made since) is not; at late, the
// reverse.
func checkAsOf(t *testing.T, g *docsGraph, run docsQuery) {
	for _, at := range []struct {
		name string
		at   time.Time
		want []string
	}{{"mid", g.mid, g.liveMid}, {"late", g.late, g.liveLate}} {
		var got []string
		for _, row := range run(map[string]any{"userId": g.user, "at": at.at}) {
			r, _ := row[1].(neo4j.Relationship)
			got = append(got, fmt.Sprint(r.Props["id"]))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(at.want))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("relationships at %s (-want +got):\n%s", at.name, diff)
		}
	}
}

// checkConstraints: the three constraints the statement names.
func checkConstraints(t *testing.T, _ *docsGraph, run docsQuery) {
	want := [][]any{{"cairn_migration_version"}, {"entity_id"}, {"user_lock"}}
	got := run(nil)
	slices.SortFunc(got, func(a, b []any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("constraints (-want +got):\n%s", diff)
	}
}

// checkSearchIndex: entity_search_scoped, ONLINE.
func checkSearchIndex(t *testing.T, _ *docsGraph, run docsQuery) {
	if diff := cmp.Diff([][]any{{"entity_search_scoped", "ONLINE"}}, run(nil)); diff != "" {
		t.Errorf("search index (-want +got):\n%s", diff)
	}
}

// checkMigrations: one row per migration file, in order, with the time it
// was applied.
func checkMigrations(t *testing.T, _ *docsGraph, run docsQuery) {
	ms, err := migrations.LoadCypher()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, m := range ms {
		want = append(want, fmt.Sprintf("%d %s", m.Version, m.Name))
	}
	for _, row := range run(nil) {
		if _, ok := row[2].(time.Time); !ok {
			t.Errorf("applied_at of %v is %T, want a DATETIME", row[:2], row[2])
		}
		got = append(got, fmt.Sprintf("%v %v", row[0], row[1]))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("migrations (-want +got):\n%s", diff)
	}
}

// neo4jVersion is what the page says the version is: 5.x or 2025.x.
var neo4jVersion = regexp.MustCompile(`^(5|20[0-9]{2})\.[0-9]+`)

// checkVersion: one row, a version of Neo4j 5 or later.
func checkVersion(t *testing.T, _ *docsGraph, run docsQuery) {
	rows := run(nil)
	if len(rows) != 1 {
		t.Fatalf("rows = %v, want one", rows)
	}
	if v, _ := rows[0][0].(string); !neo4jVersion.MatchString(v) {
		t.Errorf("version = %v, want 5.x or 2025.x", rows[0][0])
	}
}
