package knowledge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbpostgres "github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// statementCounter counts the statements a pool sends to PostgreSQL (BEGIN
// and COMMIT included): each is a round trip.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countingSchemas counts the reads of the active schemas: in a service
// with a control plane each is a statement too.
type countingSchemas struct {
	schema.Store
	n atomic.Int64
}

func (c *countingSchemas) ActiveSchemas(ctx context.Context, userID string) ([]schema.Version, error) {
	c.n.Add(1)
	return c.Store.ActiveSchemas(ctx, userID)
}

// countingPostgres opens a migrated PostgreSQL graph store whose pool
// counts its statements.
func countingPostgres(t *testing.T) (*graph.Store, *statementCounter) {
	t.Helper()
	url := pgtest.URL(t)
	db, err := dbpostgres.Open(t.Context(), url, dbpostgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	c := &statementCounter{}
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.NewStore(graphpostgres.New(pool))
	t.Cleanup(func() { g.Close(); pool.Close() })
	return g, c
}

// TestCreateRelationshipsStatements counts the statements one
// CreateRelationships call of 100 new relationships sends to PostgreSQL,
// for a type that is not acyclic (the set-based path) and for one that is
// (one by one, each with its cycle check), and then for the same 100
// again (all existing). The figures are in docs/performance.md.
func TestCreateRelationshipsStatements(t *testing.T) {
	for _, typ := range []string{graph.RefersTo, graph.PartOf} {
		t.Run(typ, func(t *testing.T) {
			g, counter := countingPostgres(t)
			now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			schemas := &countingSchemas{Store: schema.NewMemoryStore()}
			s := knowledge.NewService(g, schema.NewPersistentRegistry(schemas), knowledge.Options{Now: func() time.Time { return now }})
			var ents []map[string]any
			for i := range 200 {
				ents = append(ents, map[string]any{"entity_type": "company", "name": fmt.Sprint("Co ", i)})
			}
			res, err := s.Store(t.Context(), alice, knowledge.StoreRequest{Entities: ents})
			if err != nil {
				t.Fatal(err)
			}
			reqs := make([]knowledge.RelationshipRequest, 100)
			for i := range reqs {
				reqs[i] = knowledge.RelationshipRequest{Type: typ, SourceEntityID: res.Entities[i].EntityID, TargetEntityID: res.Entities[100+i].EntityID}
			}
			for _, round := range []string{"new", "existing"} {
				before, schemasBefore := counter.n.Load(), schemas.n.Load()
				out, err := s.CreateRelationships(t.Context(), alice, reqs)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range out {
					if r.Err != nil || r.Created != (round == "new") {
						t.Fatalf("%s round, request %d: created %v, err %v", round, i, r.Created, r.Err)
					}
				}
				n := counter.n.Load() - before
				t.Logf("%s, 100 %s relationships: %d statements", typ, round, n)
				// The relationship types come from one read of the user's
				// schemas per call, whatever the number of requests.
				if reads := schemas.n.Load() - schemasBefore; reads != 1 {
					t.Errorf("%s, 100 %s relationships: %d reads of the schemas, want 1", typ, round, reads)
				}
				// Types that are not acyclic go set-based: a fixed number of
				// statements (BEGIN, lock, endpoints, relationships read and
				// written, sources, observations, reduced relationships,
				// COMMIT), not a few per relationship.
				if typ == graph.RefersTo && n > 12 {
					t.Errorf("%s, 100 %s relationships: %d statements, want at most 12", typ, round, n)
				}
				// Acyclic types: each edge checked for a cycle, read and,
				// when new, written, in order (three statements); the rest
				// as above.
				if typ == graph.PartOf && n > 3*100+12 {
					t.Errorf("%s, 100 %s relationships: %d statements, want at most %d", typ, round, n, 3*100+12)
				}
			}
		})
	}
}
