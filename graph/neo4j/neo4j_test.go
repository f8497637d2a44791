package neo4j_test

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
)

// The conformance suite runs against the Neo4j servers that
// CAIRN_TEST_NEO4J_URI names (scripts/test starts three with
// scripts/provision-neo4j.sh), handed out by neo4jtest: each store a test
// asks for is a server's one database, emptied and held by the test alone,
// since the suite's tests all use the users alice and bob and ids such as
// ent_alice_1, and the outbox is shared by every user of a database.
//
// Within this binary, one test at a time holds stores: a test that asks
// for a second store while it holds a first (several of the suite's tests
// do) gets another server, and two tests that each held one and waited for
// a second would wait for ever.

func TestMain(m *testing.M) {
	code := m.Run()
	neo4jtest.Close()
	os.Exit(code)
}

// holders lets one test (with its subtests) hold stores at a time.
var holders = struct {
	mu     sync.Mutex
	cond   *sync.Cond
	holder string
}{}

func init() { holders.cond = sync.NewCond(&holders.mu) }

// take waits until no unrelated test of this binary holds stores, then
// takes a server for t.
func take(t *testing.T) *neo4jtest.Server {
	t.Helper()
	neo4jtest.SkipUnlessConfigured(t)
	holders.mu.Lock()
	for holders.holder != "" && holders.holder != t.Name() && !strings.HasPrefix(t.Name(), holders.holder+"/") {
		holders.cond.Wait()
	}
	if holders.holder == "" {
		holders.holder = t.Name()
		t.Cleanup(func() {
			holders.mu.Lock()
			holders.holder = ""
			holders.cond.Broadcast()
			holders.mu.Unlock()
		})
	}
	holders.mu.Unlock()
	return neo4jtest.Take(t)
}

func store(t *testing.T) *graph.Store {
	t.Helper()
	srv := take(t)
	s := graph.NewStore(graphneo4j.New(srv.Driver, srv.Config.Database))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close graph: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { graphtest.Run(t, store) }

var forgetTextSigs = cypher.Must("test_text_sigs_forget")

// TestTextSigBackfill holds the driver's graph.TextSigBackfiller to its
// contract on a live server.
func TestTextSigBackfill(t *testing.T) {
	srv := take(t)
	graphtest.TextSigBackfill(t, graphneo4j.New(srv.Driver, srv.Config.Database), func(t *testing.T) {
		q, err := forgetTextSigs.Cypher()
		if err != nil {
			t.Fatal(err)
		}
		_, err = neo4j.ExecuteQuery(t.Context(), srv.Driver, q, map[string]any{"userIds": []string{"alice", "bob"}},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(srv.Config.Database))
		if err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkCycleCheck: see graphtest.BenchmarkCycleCheck. Each driver is
// a server neo4jtest hands out, emptied.
func BenchmarkCycleCheck(b *testing.B) {
	graphtest.BenchmarkCycleCheck(b, func(tb testing.TB) graph.Driver {
		srv := neo4jtest.Take(tb)
		return graphneo4j.New(srv.Driver, srv.Config.Database)
	})
}
