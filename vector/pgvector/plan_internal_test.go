package pgvector

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/vector"
)

// TestPlansWithoutStatistics checks the plans of a search's statements on
// a table that was never analysed, where the planner expects every filter
// to keep one row, both as planned for the statement's values and as the
// generic plan a prepared statement gets after five executions (the pool
// prepares every statement). Each of these once cost a search at 10,000
// memories several times what it does now (docs/performance.md):
//
//   - the index search must scan the HNSW index, not sort every matching
//     row by its distance, and must not be compiled with JIT;
//   - the text search must compute its tsqueries once, not for every row;
//   - the exact scan of the first rows, which the planner's estimate of
//     one row sends blind, must not compute a single distance when more
//     rows pass the filter than it may read.
func TestPlansWithoutStatistics(t *testing.T) {
	const dim, rows = 8, 3000
	ctx := t.Context()
	db, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Pool.Exec(ctx, `ALTER TABLE memories SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	d := New(db.Pool, Options{})
	if _, err := d.CreateSpace(ctx, "u", "c", vector.Space{Embedder: "test", Dimension: dim}); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("coffee tea garden hotel ticket budget museum bread rent swim")
	r := rand.New(rand.NewPCG(3, 4))
	ms := make([]vector.Memory, rows)
	for i := range ms {
		text := make([]string, 6)
		for j := range text {
			text[j] = words[r.IntN(len(words))]
		}
		ms[i] = vector.Memory{ID: fmt.Sprintf("m%05d", i), UserID: "u", Collection: "c", Text: strings.Join(text, " "),
			CreatedAt: time.Unix(int64(i), 0), Embedding: randomVector(r, dim)}
	}
	if err := d.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var tuples float64
	if err := db.Pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples >= 0 {
		t.Fatalf("memories has statistics (reltuples %v); the test needs a table never analysed", tuples)
	}

	f := vector.Filter{UserID: "u", Collections: []string{"c"}}
	// Nearest reads the first rows blind on the planner's estimate of one
	// row; without statistics every filter gets it.
	if est, err := d.estimate(ctx, f, dim); err != nil || est > 1 {
		t.Errorf("estimate without statistics = %v, %v; want 1 row", est, err)
	}
	q := vector.VectorQuery{Filter: f, Vector: randomVector(r, dim), MinSimilarity: -1, K: 101}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(mode, func(t *testing.T) {
			sql, args := indexedQuery(q)
			plan := explain(t, db.Pool, append(d.indexSettings(q.K), `SET LOCAL plan_cache_mode = `+mode), "", sql, args)
			if !scans(plan, IndexName(dim)) {
				t.Errorf("the index search does not scan %s: %s", IndexName(dim), plan)
			}
			if _, ok := plan["JIT"]; ok {
				t.Errorf("the index search is compiled with JIT: %s", plan)
			}

			sql, args = d.textQuery(vector.TextQuery{Filter: f, Terms: []string{"coffee", "garden", "ticket"}, K: 101})
			plan = explain(t, db.Pool, []string{`SET LOCAL plan_cache_mode = ` + mode}, "", sql, args)
			walk(plan["Plan"], func(node map[string]any) {
				if node["Node Type"] == "Function Scan" {
					return
				}
				own := map[string]any{}
				for k, v := range node {
					if k != "Plans" {
						own[k] = v
					}
				}
				if b, _ := json.Marshal(own); strings.Contains(string(b), "to_tsquery") {
					t.Errorf("the text search computes a tsquery for each row of a %s node: %s", node["Node Type"], b)
				}
			})

			// More rows pass than nearestFirst may read: it counts them
			// and computes no distance.
			sql, args = firstQuery(q, rows/2, true)
			plan = explain(t, db.Pool, []string{`SET LOCAL plan_cache_mode = ` + mode}, "ANALYZE, ", sql, args)
			found := false
			walk(plan["Plan"], func(node map[string]any) {
				if node["Subplan Name"] != "CTE dist" {
					return
				}
				found = true
				walk(node, func(n map[string]any) {
					if n["CTE Name"] == "cand" && n["Actual Loops"] != 0.0 {
						t.Errorf("distances were computed (%v loops) although more rows pass than nearestFirst may read: %s", n["Actual Loops"], plan)
					}
				})
			})
			if !found {
				t.Errorf("no CTE dist in the plan: %s", plan)
			}
		})
	}
}

// explain prepares sql, runs the settings in a transaction and returns
// the JSON plan of executing the prepared statement with args (options
// are EXPLAIN's besides FORMAT JSON, each followed by ", ").
func explain(t *testing.T, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, settings []string, options, sql string, args []any) map[string]any {
	t.Helper()
	ctx := t.Context()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// A prepared statement outlives the transaction; a name of its own
	// keeps it from meeting the last one's on the same connection.
	explained++
	name := fmt.Sprintf("probe%d", explained)
	for _, s := range append(settings, `PREPARE `+name+` AS `+sql) {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	params := make([]string, len(args))
	for i := range args {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	// The simple protocol puts the arguments into the text of EXECUTE.
	var out []byte
	if err := tx.QueryRow(ctx, `EXPLAIN (`+options+`FORMAT JSON) EXECUTE `+name+`(`+strings.Join(params, ", ")+`)`,
		append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", sql, err)
	}
	if _, err := tx.Exec(ctx, `DEALLOCATE `+name); err != nil {
		t.Fatal(err)
	}
	var plans []map[string]any
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v: %s", err, out)
	}
	return plans[0]
}

// explained counts explain's prepared statements.
var explained int

// walk calls fn on node and every node below it.
func walk(node any, fn func(map[string]any)) {
	n, ok := node.(map[string]any)
	if !ok {
		return
	}
	fn(n)
	subs, _ := n["Plans"].([]any)
	for _, s := range subs {
		walk(s, fn)
	}
}

// scans reports whether plan reads the index named index.
func scans(plan map[string]any, index string) bool {
	found := false
	walk(plan["Plan"], func(n map[string]any) { found = found || n["Index Name"] == index })
	return found
}

func randomVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestExactScanPlannedForItsValues: the exact scan of every matching row
// is planned for each search's values, never run as one of the
// connection's prepared statements, whose plan PostgreSQL may make generic
// after five executions, without knowing how many rows the filter keeps
// (for a tag on half the rows, a generic plan took twice as long: see
// nearestExact). One connection runs it seven times with the same answer,
// and holds no prepared statement of it afterwards.
func TestExactScanPlannedForItsValues(t *testing.T) {
	const dim = 8
	ctx := t.Context()
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	params := u.Query()
	params.Set("pool_max_conns", "1")
	u.RawQuery = params.Encode()
	db, err := postgres.Open(ctx, u.String(), postgres.Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	d := New(db.Pool, Options{})
	if _, err := d.CreateSpace(ctx, "u", "c", vector.Space{Embedder: "test", Dimension: dim}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	ms := make([]vector.Memory, 60)
	for i := range ms {
		ms[i] = vector.Memory{ID: fmt.Sprintf("m%03d", i), UserID: "u", Collection: "c", Text: "memory",
			CreatedAt: time.Unix(int64(i), 0), Embedding: randomVector(r, dim), Tags: []string{[]string{"even", "odd"}[i%2]}}
	}
	if err := d.Insert(ctx, ms); err != nil {
		t.Fatal(err)
	}
	q := vector.VectorQuery{Filter: vector.Filter{UserID: "u", Collections: []string{"c"}, Tags: []string{"odd"}},
		Vector: randomVector(r, dim), MinSimilarity: -1, K: 5}
	var first []vector.Scored
	for i := range 7 {
		got, err := d.nearestExact(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != q.K {
			t.Fatalf("run %d: %d rows, want %d", i, len(got), q.K)
		}
		if i == 0 {
			first = got
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Fatalf("run %d answered %v, the first %v", i, got, first)
		}
	}
	var prepared int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements
		WHERE statement LIKE '%ORDER BY distance, m.id%' AND statement NOT LIKE '%pg_prepared_statements%'`,
		pgx.QueryExecModeSimpleProtocol).Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 {
		t.Errorf("the exact scan is a prepared statement of the connection (%d), which may get a generic plan", prepared)
	}
}
