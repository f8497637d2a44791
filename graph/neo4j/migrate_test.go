package neo4j

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/migrations"
)

// fakeGraph plays the part of Neo4j for the runner's statements: the lock
// node, the version nodes, and a log of the schema commands run. Each call
// is one transaction, serialised as Neo4j serialises writes to one node.
type fakeGraph struct {
	mu       sync.Mutex
	holder   string
	until    time.Time
	versions map[int64]bool
	schema   []string
	// failOn fails the schema command that contains it, once.
	failOn string
	// race answers the schema command that contains it with an
	// EquivalentSchemaRuleAlreadyExists error, as a lost race does.
	race string
}

func (f *fakeGraph) run(_ context.Context, write bool, query string, params map[string]any) ([]map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch query {
	case migrationLockAcquire.Text():
		now := params["now"].(time.Time)
		if f.holder == "" || f.holder == params["holder"] || !f.until.After(now) {
			f.holder, f.until = params["holder"].(string), params["until"].(time.Time)
			return []map[string]any{{"holder": f.holder}}, nil
		}
		return nil, nil
	case migrationLockRelease.Text():
		if f.holder == params["holder"] {
			f.holder, f.until = "", time.Time{}
		}
		return nil, nil
	case migrationApplied.Text():
		var out []map[string]any
		for v := range f.versions {
			out = append(out, map[string]any{"version": v})
		}
		return out, nil
	case migrationRecord.Text():
		f.versions[params["version"].(int64)] = true
		return nil, nil
	}
	if !write {
		return nil, errors.New("fake: a schema command in a read transaction")
	}
	if f.failOn != "" && strings.Contains(query, f.failOn) {
		f.failOn = ""
		return nil, &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: "boom"}
	}
	f.schema = append(f.schema, query)
	if f.race != "" && strings.Contains(query, f.race) {
		return nil, &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists", Msg: "an equivalent index exists"}
	}
	return nil, nil
}

func newFakeGraph() *fakeGraph { return &fakeGraph{versions: map[int64]bool{}} }

func allStatements(t *testing.T) (int, int) {
	t.Helper()
	all, err := migrations.LoadCypher()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range all {
		n += len(m.Statements)
	}
	return len(all), n
}

func TestMigrate(t *testing.T) {
	files, stmts := allStatements(t)
	g := newFakeGraph()
	applied, err := migrate(t.Context(), g, MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != files || len(g.versions) != files {
		t.Fatalf("applied %d migrations, recorded %d, want %d", len(applied), len(g.versions), files)
	}
	// The two bookkeeping constraints first, then every statement in order.
	if len(g.schema) != 2+stmts || !strings.Contains(g.schema[0], "CairnMigration") || !strings.Contains(g.schema[1], "CairnMigrationLock") {
		t.Fatalf("schema commands: %q", g.schema)
	}
	if g.holder != "" {
		t.Errorf("the lease is still held by %s", g.holder)
	}

	again, err := migrate(t.Context(), g, MigrateOptions{})
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %d, %v; want none", len(again), err)
	}
	if len(g.schema) != 2+stmts+2 {
		t.Errorf("second run ran %d schema commands, want only the 2 bookkeeping ones", len(g.schema)-2-stmts)
	}
}

func TestMigrateLostRaceIsSuccess(t *testing.T) {
	g := newFakeGraph()
	g.race = "entity_text"
	if _, err := migrate(t.Context(), g, MigrateOptions{}); err != nil {
		t.Fatalf("a lost race for an equivalent index failed the migration: %v", err)
	}
}

func TestMigrateFailureReleasesLease(t *testing.T) {
	files, _ := allStatements(t)
	g := newFakeGraph()
	g.failOn = "entity_user_type"
	_, err := migrate(t.Context(), g, MigrateOptions{})
	if err == nil || !strings.Contains(err.Error(), "002_lookups") {
		t.Fatalf("migrate = %v, want the failure of 002_lookups", err)
	}
	if g.holder != "" {
		t.Errorf("a failed run left the lease held")
	}
	if !g.versions[1] || g.versions[2] {
		t.Errorf("recorded versions %v, want 001 only", g.versions)
	}
	applied, err := migrate(t.Context(), g, MigrateOptions{})
	if err != nil || len(applied) != files-1 {
		t.Fatalf("the next run applied %d, %v; want %d", len(applied), err, files-1)
	}
}

func TestMigrateWaitsForLease(t *testing.T) {
	g := newFakeGraph()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(10 * time.Second); return now }
	// Another runner holds a lease that ends in a minute of this clock.
	g.holder, g.until = "other", now.Add(time.Minute)
	applied, err := migrate(t.Context(), g, MigrateOptions{Poll: time.Millisecond, Now: clock})
	if err != nil || len(applied) == 0 {
		t.Fatalf("migrate = %d, %v; want it to take the lease once it ran out", len(applied), err)
	}

	g = newFakeGraph()
	g.holder, g.until = "other", time.Now().Add(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := migrate(ctx, g, MigrateOptions{Poll: time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("migrate under a held lease = %v, want it to wait until the context ends", err)
	}
}

func TestMigrateConcurrentRunners(t *testing.T) {
	files, stmts := allStatements(t)
	g := newFakeGraph()
	var wg sync.WaitGroup
	total := make([]int, 4)
	errs := make([]error, 4)
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied, err := migrate(t.Context(), g, MigrateOptions{Poll: time.Millisecond})
			total[i], errs[i] = len(applied), err
		}()
	}
	wg.Wait()
	sum := 0
	for i := range total {
		if errs[i] != nil {
			t.Fatalf("runner %d: %v", i, errs[i])
		}
		sum += total[i]
	}
	if sum != files {
		t.Errorf("the runners applied %d migrations between them, want each of %d once", sum, files)
	}
	if got := len(g.schema) - 2*len(total); got != stmts {
		t.Errorf("the runners ran %d migration statements, want %d (each once)", got, stmts)
	}
}
