package neo4j_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// The conformance suite runs against the Neo4j 5 that CAIRN_TEST_NEO4J_URI
// names (docker compose up neo4j: bolt://localhost:7687), with
// CAIRN_TEST_NEO4J_USER (default neo4j), CAIRN_TEST_NEO4J_PASSWORD and
// CAIRN_TEST_NEO4J_DATABASE (default neo4j).
//
// Every store a test asks for must be empty and its own: the suite's tests
// run in parallel and all use the users alice and bob and ids such as
// ent_alice_1, and the outbox is shared by every user of a database.
//
//   - On Enterprise Edition each store gets a database of its own (CREATE
//     DATABASE, migrated, dropped when the test ends), so tests run side by
//     side as on the other backends.
//   - Community Edition has one database. There, stores are handed out one
//     at a time: a test waits until the previous test's store is released,
//     and the nodes of the suite's users are deleted before and after each
//     test. A test that asks for a second store while its first is in use
//     (two of the suite's tests do) cannot have one and is skipped with a
//     line saying so. Point CAIRN_TEST_NEO4J_DATABASE at a database that
//     holds no other data: the outbox tests claim every user's entries.
var (
	createDatabase = cypher.Must("test_database_create")
	dropDatabase   = cypher.Must("test_database_drop")
	cleanUsers     = cypher.Must("test_users_clean")
)

// suiteUsers are the users graphtest writes as.
var suiteUsers = []string{"alice", "bob"}

// live is the test binary's one Neo4j driver and harness, made by the
// first test that needs them and closed by TestMain.
var live struct {
	once sync.Once
	h    *harness
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if live.h != nil {
		_ = live.h.d.Close(context.Background())
	}
	os.Exit(code)
}

// liveHarness returns the harness on the server CAIRN_TEST_NEO4J_URI names,
// or skips t in one line when it is not set.
func liveHarness(t *testing.T) *harness {
	t.Helper()
	uri := os.Getenv("CAIRN_TEST_NEO4J_URI")
	if uri == "" {
		t.Skip("CAIRN_TEST_NEO4J_URI is not set: the Neo4j conformance suite needs a Neo4j 5 server (see docs/neo4j.md)")
	}
	live.once.Do(func() {
		cfg := graphneo4j.Config{
			URI: uri, User: cmp.Or(os.Getenv("CAIRN_TEST_NEO4J_USER"), "neo4j"),
			Password: os.Getenv("CAIRN_TEST_NEO4J_PASSWORD"), Database: os.Getenv("CAIRN_TEST_NEO4J_DATABASE"),
		}
		ctx := context.Background()
		d, err := graphneo4j.Connect(ctx, cfg)
		if err != nil {
			live.err = err
			return
		}
		h := &harness{d: d, database: cfg.Database}
		h.cond = sync.NewCond(&h.mu)
		live.h = h
		if _, err := graphneo4j.Migrate(ctx, d, cfg.Database, graphneo4j.MigrateOptions{}); err != nil {
			live.err = err
			return
		}
		h.enterprise, live.err = isEnterprise(ctx, d, cfg.Database)
	})
	if live.err != nil {
		t.Fatal(live.err)
	}
	return live.h
}

func TestConformance(t *testing.T) { graphtest.Run(t, liveHarness(t).store) }

// isEnterprise reports whether the server can create databases.
func isEnterprise(ctx context.Context, d neo4j.DriverWithContext, database string) (bool, error) {
	q, err := cypher.Must("server_version").Cypher()
	if err != nil {
		return false, err
	}
	res, err := neo4j.ExecuteQuery(ctx, d, q, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(database))
	if err != nil {
		return false, fmt.Errorf("read the server's edition: %w", err)
	}
	if len(res.Records) == 0 {
		return false, errors.New("read the server's edition: no row")
	}
	edition, _, _ := neo4j.GetRecordValue[string](res.Records[0], "edition")
	return edition == "enterprise", nil
}

type harness struct {
	d          neo4j.DriverWithContext
	database   string
	enterprise bool

	// On Community Edition, holder is the test whose store is in use.
	mu     sync.Mutex
	cond   *sync.Cond
	holder string
}

func (h *harness) store(t *testing.T) *graph.Store {
	t.Helper()
	database := h.database
	if h.enterprise {
		database = h.newDatabase(t)
	} else {
		h.take(t)
	}
	s := graph.NewStore(graphneo4j.New(h.d, database))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close graph: %v", err)
		}
	})
	return s
}

// newDatabase creates and migrates a database for t, dropped when t ends.
func (h *harness) newDatabase(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "cairntest-" + hex.EncodeToString(b)
	h.system(t, createDatabase, name)
	t.Cleanup(func() { h.system(t, dropDatabase, name) })
	if _, err := graphneo4j.Migrate(t.Context(), h.d, name, graphneo4j.MigrateOptions{}); err != nil {
		t.Fatalf("migrate %s: %v", name, err)
	}
	return name
}

// system runs an administration command on database name.
func (h *harness) system(t *testing.T, s cypher.Statement, name string) {
	t.Helper()
	q, err := s.Cypher()
	if err != nil {
		t.Fatal(err)
	}
	_, err = neo4j.ExecuteQuery(context.WithoutCancel(t.Context()), h.d, q, map[string]any{"name": name},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("system"))
	if err != nil {
		t.Fatalf("%s %s: %v", s.Name(), name, err)
	}
}

// take waits until no other test holds the one database, cleans it of
// the suite's users and holds it until t ends. A test whose own store (or
// an ancestor's) is in use is skipped: waiting would never end.
func (h *harness) take(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	for h.holder != "" {
		if t.Name() == h.holder || strings.HasPrefix(t.Name(), h.holder+"/") {
			h.mu.Unlock()
			t.Skip("needs a second empty store while its first is in use: a database per store, which only Neo4j Enterprise Edition gives")
		}
		h.cond.Wait()
	}
	h.holder = t.Name()
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		h.holder = ""
		h.cond.Broadcast()
		h.mu.Unlock()
	}
	if err := h.clean(t); err != nil {
		release()
		t.Fatalf("clean the test database: %v", err)
	}
	t.Cleanup(func() {
		defer release()
		if err := h.clean(t); err != nil {
			t.Errorf("clean the test database: %v", err)
		}
	})
}

// clean deletes the nodes of the suite's users.
func (h *harness) clean(t *testing.T) error {
	q, err := cleanUsers.Cypher()
	if err != nil {
		return err
	}
	_, err = neo4j.ExecuteQuery(context.WithoutCancel(t.Context()), h.d, q, map[string]any{"userIds": suiteUsers},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(h.database))
	return err
}

var forgetTextSigs = cypher.Must("test_text_sigs_forget")

// TestTextSigBackfill holds the driver's graph.TextSigBackfiller to its
// contract on a live server.
func TestTextSigBackfill(t *testing.T) {
	h := liveHarness(t)
	database := h.database
	if h.enterprise {
		database = h.newDatabase(t)
	} else {
		h.take(t)
	}
	graphtest.TextSigBackfill(t, graphneo4j.New(h.d, database), func(t *testing.T) {
		q, err := forgetTextSigs.Cypher()
		if err != nil {
			t.Fatal(err)
		}
		_, err = neo4j.ExecuteQuery(t.Context(), h.d, q, map[string]any{"userIds": suiteUsers},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(database))
		if err != nil {
			t.Fatal(err)
		}
	})
}
