package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
)

// TestNeo4jStartupErrors is TestStartupErrors for the Neo4j side of the
// split deployment, against a live server: each command exits with status
// 1 and one line on stderr that names the problem and what to do, and
// PostgreSQL is never touched, since Neo4j is checked first.
func TestNeo4jStartupErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	neo4jtest.SkipUnlessConfigured(t)
	// A port nothing listens on: take one and give it back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	const wrongPassword = "cairn-wrong-password-4711"

	tests := []struct {
		name string
		// config returns the settings to start with; it may hold a
		// server for the test.
		config func(t *testing.T) graphneo4j.Config
		want   []string
	}{
		{"Unreachable", func(*testing.T) graphneo4j.Config {
			return graphneo4j.Config{URI: "bolt://" + closed, User: "neo4j", Password: "unused", Database: "neo4j"}
		}, []string{"cannot reach bolt://" + closed, `database "neo4j"`, "check the URI and that Neo4j is running"}},
		// Neo4j locks a user out for a while after repeated failed logins:
		// the test holds the server, and gives it back only once the right
		// password is accepted again.
		{"WrongPassword", func(t *testing.T) graphneo4j.Config {
			right := neo4jtest.Take(t).Config
			t.Cleanup(func() { waitForLogin(t, right) })
			c := right
			c.Password = wrongPassword
			return c
		}, []string{"refused the user and password", "check them"}},
		{"UnknownDatabase", func(t *testing.T) graphneo4j.Config {
			c := neo4jtest.Take(t).Config
			c.Database = "nosuchdb"
			return c
		}, []string{`has no database "nosuchdb"`, "create it or name another", `Community Edition has only "neo4j"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.config(t)
			for _, command := range []string{"serve", "stdio", "migrate"} {
				t.Run(command, func(t *testing.T) {
					pg := pgtest.EmptyURL(t)
					cmd := exec.Command(cairnBinary(t), command, "--data-dir", t.TempDir())
					if command == "serve" {
						cmd.Args = append(cmd.Args, "--addr", "127.0.0.1:0")
					}
					cmd.Env = append(os.Environ(), "CAIRN_DATABASE_URL="+pg, "CAIRN_OWNER_KEY="+testOwnerKey,
						"CAIRN_NEO4J_URI="+c.URI, "CAIRN_NEO4J_USER="+c.User, "CAIRN_NEO4J_PASSWORD="+c.Password,
						"CAIRN_NEO4J_DATABASE="+c.Database)
					line := runStartupError(t, cmd, "cairn "+command+": neo4j: ", tc.want)
					if c.Password != "" && strings.Contains(line, c.Password) {
						t.Errorf("stderr shows the password:\n%s", line)
					}
					if n := tablesIn(t, pg); n > 0 {
						t.Errorf("PostgreSQL has %d tables after a failed Neo4j start, want none (Neo4j is checked first)", n)
					}
				})
			}
		})
	}
}

// withoutModelWarning is stderr without the log line that serve and stdio
// write, before anything else, when the binary was built without the
// sentence-embedding model, and without the final newline.
func withoutModelWarning(stderr string) string {
	var lines []string
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, modelMissing(defaultModel)) {
			continue
		}
		lines = append(lines, line)
	}
	return strings.TrimSuffix(strings.Join(lines, ""), "\n")
}

// tablesIn counts the tables in the schema of a pgtest.EmptyURL.
func tablesIn(t *testing.T, url string) int {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForLogin waits until c's user may log in again after failed logins
// locked it out (Neo4j's dbms.security.auth_lock_time, 5 s by default), so
// that the next test to take the server can connect. It tries seldom, and
// less and less often: a login tried while the user is locked out keeps it
// locked.
func waitForLogin(t *testing.T, c graphneo4j.Config) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var err error
	for pause := 6 * time.Second; pause < time.Minute; pause *= 2 {
		time.Sleep(pause)
		var d neo4j.DriverWithContext
		if d, err = graphneo4j.Connect(ctx, c); err == nil {
			_ = d.Close(ctx)
			return
		}
	}
	t.Errorf("%s does not accept its password again after the failed logins: %v", c.URI, err)
}
