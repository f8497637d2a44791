package neo4j_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/graph"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// TestSearchIndexUpgrade puts a database back where migration 008 found
// it (entities written and searchable through 004's index entity_search,
// no entity_search_scoped), migrates it, and checks that migration 008
// ran, that the old index is gone and the new one online, and that the
// entities written before it are found by search at once, each user's
// only, by type as well.
func TestSearchIndexUpgrade(t *testing.T) {
	srv := take(t)
	ctx := t.Context()
	exec := func(q string, params map[string]any) []*neo4j.Record {
		t.Helper()
		res, err := neo4j.ExecuteQuery(ctx, srv.Driver, q, params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res.Records
	}
	migrate := func(ctx context.Context) []int {
		t.Helper()
		applied, err := graphneo4j.Migrate(ctx, srv.Driver, srv.Config.Database, graphneo4j.MigrateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var versions []int
		for _, m := range applied {
			versions = append(versions, m.Version)
		}
		return versions
	}
	// Whatever happens below, the server is left migrated for the tests
	// that take it next.
	t.Cleanup(func() { migrate(context.Background()) })

	exec("DROP INDEX entity_search_scoped IF EXISTS", nil)
	exec("MATCH (m:CairnMigration {version: 8}) DELETE m", nil)
	exec("CREATE FULLTEXT INDEX entity_search IF NOT EXISTS FOR (e:Entity) ON EACH [e.search_name, e.search_text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}", nil)
	exec("CALL db.awaitIndex('entity_search', 60)", nil)

	s := graph.NewStore(graphneo4j.New(srv.Driver, srv.Config.Database))
	t.Cleanup(func() { _ = s.Close() })
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	var ents []graph.Entity
	for _, e := range []struct{ id, user, typ string }{
		{"ent_up_1", "alice", "company"}, {"ent_up_2", "alice", "person"}, {"ent_up_3", "bob", "company"},
	} {
		ents = append(ents, graph.Entity{
			ID: e.id, UserID: e.user, Type: e.typ, CanonicalName: "Harbour Works", SchemaVersion: "1.0", ObservationCount: 1,
			Snapshot: map[string]any{"name": "Harbour Works"}, CreatedAt: at, ComputedAt: at, LastObservationAt: at,
		})
	}
	if err := s.Update(ctx, func(tx *graph.Tx) error { return tx.PutEntities(ctx, ents) }); err != nil {
		t.Fatal(err)
	}

	if got := migrate(ctx); len(got) != 1 || got[0] != 8 {
		t.Fatalf("migrated %v, want [8]", got)
	}
	var indexes []string
	for _, r := range exec("SHOW FULLTEXT INDEXES YIELD name, state WHERE name STARTS WITH 'entity_' RETURN name + ' ' + state AS s ORDER BY s", nil) {
		v, _ := r.Get("s")
		indexes = append(indexes, v.(string))
	}
	if len(indexes) != 1 || indexes[0] != "entity_search_scoped ONLINE" {
		t.Errorf("full-text indexes after 008: %q, want [entity_search_scoped ONLINE]", indexes)
	}

	search := func(user string, types []string) []string {
		t.Helper()
		var ids []string
		err := s.View(ctx, func(tx *graph.Tx) error {
			hits, _, err := tx.SearchEntities(ctx, graph.EntitySearch{UserID: user, Terms: graph.SearchTerms("harbour wor"), Types: types})
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, tc := range []struct {
		user  string
		types []string
		want  []string
	}{
		{"alice", nil, []string{"ent_up_1", "ent_up_2"}},
		{"alice", []string{"person"}, []string{"ent_up_2"}},
		{"bob", nil, []string{"ent_up_3"}},
		{"carol", nil, nil},
	} {
		if got := search(tc.user, tc.types); !slices.Equal(got, tc.want) {
			t.Errorf("search as %s, types %v: %v, want %v", tc.user, tc.types, got, tc.want)
		}
	}
}
