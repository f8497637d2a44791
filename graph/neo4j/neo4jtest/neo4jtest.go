// Package neo4jtest hands the Neo4j servers of a test run to tests, one test
// per server at a time, across every test binary of the run.
//
// CAIRN_TEST_NEO4J_URI names one server or several, separated by commas
// (scripts/provision-neo4j.sh starts three and sets it), with
// CAIRN_TEST_NEO4J_USER (default neo4j), CAIRN_TEST_NEO4J_PASSWORD and
// CAIRN_TEST_NEO4J_DATABASE (default neo4j). Community Edition has one
// database per server, and Cairn's outbox is drained across users, so a
// test that writes to a database must have it alone: Take waits until a
// server is free in every process of the run (a lock file per server,
// released by the kernel if the process dies), empties its database, brings
// its migrations up to date and holds it until the test ends.
//
// Without the variable, Take skips the test with one line saying how to run
// it; under CI=true it fails instead, so that a broken provisioning step
// cannot pass as a green run.
package neo4jtest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// The variables that name the servers.
const (
	EnvURI      = "CAIRN_TEST_NEO4J_URI"
	EnvUser     = "CAIRN_TEST_NEO4J_USER"
	EnvPassword = "CAIRN_TEST_NEO4J_PASSWORD"
	EnvDatabase = "CAIRN_TEST_NEO4J_DATABASE"
	// EnvLog, when set, names a file to which Take appends the name of
	// every test that got a server; scripts/test counts them to report how
	// many Neo4j tests ran.
	EnvLog = "CAIRN_NEO4JTEST_LOG"
)

// Server is a server a test holds.
type Server struct {
	// Config reaches the server's database; Database is never empty.
	Config graphneo4j.Config
	// Driver is the process's one driver for the server, shared by every
	// test that takes it; a test must not close it.
	Driver neo4j.DriverWithContext
}

// Env is the environment that points a cairn process at the server
// (CAIRN_NEO4J_*).
func (s *Server) Env() []string {
	return []string{
		"CAIRN_NEO4J_URI=" + s.Config.URI,
		"CAIRN_NEO4J_USER=" + s.Config.User,
		"CAIRN_NEO4J_PASSWORD=" + s.Config.Password,
		"CAIRN_NEO4J_DATABASE=" + s.Config.Database,
	}
}

// configs returns the configured servers, or nil.
func configs() []graphneo4j.Config {
	var out []graphneo4j.Config
	for uri := range strings.SplitSeq(os.Getenv(EnvURI), ",") {
		if uri = strings.TrimSpace(uri); uri == "" {
			continue
		}
		out = append(out, graphneo4j.Config{
			URI: uri, User: cmp.Or(os.Getenv(EnvUser), "neo4j"), Password: os.Getenv(EnvPassword),
			Database: cmp.Or(os.Getenv(EnvDatabase), graphneo4j.DefaultDatabase),
		})
	}
	return out
}

// Count returns how many servers are configured.
func Count() int { return len(configs()) }

// SkipUnlessConfigured skips t (fails it under CI=true) when no server is
// configured.
func SkipUnlessConfigured(t testing.TB) {
	t.Helper()
	if Count() > 0 {
		return
	}
	msg := "neo4j: " + EnvURI + " is not set; run scripts/test, or set it to a Neo4j 5 server (see docs/neo4j.md), to run this test"
	if inCI() {
		t.Fatal(msg + " (CI=true: Neo4j tests may not be skipped)")
	}
	t.Skip(msg)
}

func inCI() bool {
	switch os.Getenv("CI") {
	case "true", "TRUE", "True", "1":
		return true
	}
	return false
}

// process is what this test binary knows of the servers: a driver for each,
// made once, and which servers its tests hold.
var process struct {
	mu       sync.Mutex
	drivers  map[string]neo4j.DriverWithContext
	migrated map[string]bool
	held     map[string]string // server key -> the test that holds it
}

func key(c graphneo4j.Config) string { return c.URI + "|" + c.Database }

// Take waits until one of the configured servers is free, empties its
// database, migrates it and returns it, held by t until t ends. A test may
// hold several at once (when it needs a second empty store); one that asks
// for more than the run has is skipped with a line saying why, since
// waiting would never end.
func Take(t testing.TB) *Server {
	t.Helper()
	SkipUnlessConfigured(t)
	cfgs := configs()
	ctx := context.WithoutCancel(t.Context())

	var (
		cfg  graphneo4j.Config
		lock *fileLock
	)
	waitingSince := time.Now()
	logged := false
	for lock == nil {
		mine := 0
		process.mu.Lock()
		for _, c := range cfgs {
			if holder, ok := process.held[key(c)]; ok && related(holder, t.Name()) {
				mine++
			}
		}
		process.mu.Unlock()
		if mine == len(cfgs) {
			t.Skipf("neo4j: needs %d empty databases at once, and %s names %d server(s) (scripts/provision-neo4j.sh starts three)", mine+1, EnvURI, len(cfgs))
		}
		for _, c := range cfgs {
			l, err := tryLock(c)
			if err != nil {
				t.Fatalf("neo4j: lock %s: %v", c.URI, err)
			}
			if l != nil {
				cfg, lock = c, l
				break
			}
		}
		if lock == nil {
			if !logged && time.Since(waitingSince) > 30*time.Second {
				t.Logf("neo4j: waiting for a free server among %d (others hold them)", len(cfgs))
				logged = true
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	process.mu.Lock()
	if process.held == nil {
		process.held = map[string]string{}
	}
	process.held[key(cfg)] = t.Name()
	process.mu.Unlock()
	t.Cleanup(func() {
		process.mu.Lock()
		delete(process.held, key(cfg))
		process.mu.Unlock()
		lock.unlock()
	})

	d, err := driver(ctx, cfg)
	if err != nil {
		t.Fatalf("neo4j: %v", err)
	}
	if _, err := graphneo4j.ClearDatabase(ctx, d, cfg.Database); err != nil {
		t.Fatalf("neo4j: empty %s: %v", cfg.URI, err)
	}
	record(t)
	return &Server{Config: cfg, Driver: d}
}

// record appends t's name to the file EnvLog names. O_APPEND writes of a
// line are atomic, so test binaries running side by side may share it.
func record(t testing.TB) {
	path := os.Getenv(EnvLog)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strings.ReplaceAll(t.Name(), " ", "_"))
}

// related reports whether two tests are the same or one runs inside the
// other: the tests that share a lease.
func related(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// driver returns the process's driver for c's server, connecting and
// migrating it the first time.
func driver(ctx context.Context, c graphneo4j.Config) (neo4j.DriverWithContext, error) {
	process.mu.Lock()
	defer process.mu.Unlock()
	k := key(c)
	if d, ok := process.drivers[k]; ok {
		return d, nil
	}
	d, err := graphneo4j.Connect(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, err := graphneo4j.Migrate(ctx, d, c.Database, graphneo4j.MigrateOptions{}); err != nil {
		_ = d.Close(ctx)
		return nil, err
	}
	if process.drivers == nil {
		process.drivers = map[string]neo4j.DriverWithContext{}
	}
	process.drivers[k] = d
	return d, nil
}

// Close closes the drivers the process made; TestMain may call it after
// m.Run.
func Close() {
	process.mu.Lock()
	defer process.mu.Unlock()
	for k, d := range process.drivers {
		_ = d.Close(context.Background())
		delete(process.drivers, k)
	}
}

// lockPath is the lock file of c's server, shared by every process of the
// machine that uses it.
func lockPath(c graphneo4j.Config) string {
	sum := sha256.Sum256([]byte(key(c)))
	return filepath.Join(os.TempDir(), "cairn-neo4jtest-"+hex.EncodeToString(sum[:8])+".lock")
}

// tryLock takes c's lock if it is free, or returns nil.
func tryLock(c graphneo4j.Config) (*fileLock, error) {
	l, ok, err := lockFile(lockPath(c))
	if err != nil || !ok {
		return nil, err
	}
	return l, nil
}

// String names the server for messages.
func (s *Server) String() string { return fmt.Sprintf("%s/%s", s.Config.URI, s.Config.Database) }

// Holds returns how many nodes and relationships of the database have a
// property whose value (or an element of a list value), as lower-case
// text, contains s: the proofs of erasure (issue 37) search every property
// for a marker string.
func Holds(ctx context.Context, drv neo4j.DriverWithContext, database, s string) (int64, error) {
	res, err := neo4j.ExecuteQuery(ctx, drv, `
		CALL () { MATCH (n) RETURN [k IN keys(n) | n[k]] AS vs
		  UNION ALL MATCH ()-[r]->() RETURN [k IN keys(r) | r[k]] AS vs }
		WITH [v IN vs | toLower(coalesce(toStringOrNull(v),
		  reduce(s = '', x IN CASE WHEN v IS :: LIST<ANY> THEN v ELSE [] END | s + ' ' + coalesce(toStringOrNull(x), ''))))] AS vs
		WITH vs WHERE any(v IN vs WHERE v CONTAINS $m)
		RETURN count(*) AS n`, map[string]any{"m": strings.ToLower(s)}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(database))
	if err != nil {
		return 0, fmt.Errorf("neo4jtest: search for a string: %w", err)
	}
	n, _ := res.Records[0].Get("n")
	return n.(int64), nil
}
