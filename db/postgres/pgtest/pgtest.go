// Package pgtest gives each test a PostgreSQL database or schema of its own,
// on the server that CAIRN_TEST_DATABASE_URL names.
//
// Without that variable, tests that need PostgreSQL skip with one line that
// says how to enable them; under CI=true they fail instead, so that a broken
// provisioning step cannot pass as a green run. scripts/test sets the
// variable (see scripts/provision-postgres.sh).
//
// URL hands out a database copied from a template that holds every
// migration, built once per set of migrations and shared by every test
// binary on the server. With copies rather than a schema migrated per test,
// the whole suite took 495 s rather than 551 s (2026-11-29, nearly 400
// PostgreSQL tests a run): the machine spends a little less on a copy than
// on creating a schema, migrating it and dropping it (27 against 34
// hundredths of a CPU second, psql, checkpoint included), the test binaries
// no longer run 29 migrations each under the race detector, and the
// migration runner's advisory lock, which is per database, no longer
// serialises the tests of every package; how the saving splits between
// these was not measured. EmptyURL hands out an empty schema, for the
// tests of migrating itself.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cairnkg/cairn/migrations"
)

// EnvURL names the server the tests use.
const EnvURL = "CAIRN_TEST_DATABASE_URL"

// EnvLog, when set, names a file to which URL appends the name of every test
// that got a schema; scripts/test counts them to report how many PostgreSQL
// tests ran.
const EnvLog = "CAIRN_PGTEST_LOG"

// testDatabase is the database, on the server EnvURL names, that holds the
// tests' schemas.
const testDatabase = "cairn_test"

var setup struct {
	sync.Once
	url string // of testDatabase
	err error
}

var template struct {
	sync.Once
	name string // of the template database
	err  error
}

// URL returns the URL of a new database of the test's own, with the vector
// extension and every PostgreSQL migration applied (a store opened on it
// finds nothing to migrate), and drops the database when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := baseURL(t)
	template.Do(func() { template.name, template.err = buildTemplate(base) })
	if template.err != nil {
		t.Fatalf("postgres: build the migrated template database: %v", template.err)
	}
	name := "t_" + randomHex()
	exec(t, base, `CREATE DATABASE `+name+` TEMPLATE `+template.name)
	// FORCE: a test that failed half-way may leave a pool open; its
	// database goes all the same.
	t.Cleanup(func() { exec(t, base, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	record(t)
	u, err := databaseURL(base, name)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return u
}

// DropWhenDone drops the database name when t ends: one that the code
// under test made on the test server and keeps on purpose (cairn bench
// --keep), which would otherwise outlive the run.
func DropWhenDone(t testing.TB, name string) {
	t.Helper()
	base := baseURL(t)
	t.Cleanup(func() { exec(t, base, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`) })
}

// EmptyURL returns the URL of a new, empty schema in the test database,
// with the vector extension usable in it, and drops the schema when the
// test ends: for tests of what migrating does. Connections made with the
// URL have search_path set to that schema.
func EmptyURL(t testing.TB) string {
	t.Helper()
	base := baseURL(t)
	setup.Do(func() { setup.url, setup.err = prepare(base) })
	if setup.err != nil {
		t.Fatalf("postgres: prepare the test database: %v", setup.err)
	}

	schema := "t_" + randomHex()
	exec(t, setup.url, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { exec(t, setup.url, `DROP SCHEMA `+schema+` CASCADE`) })
	record(t)

	u, err := url.Parse(setup.url)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// baseURL returns the server's URL, or skips t (fails it under CI=true)
// when there is none.
func baseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		msg := "postgres: " + EnvURL + " is not set; run scripts/test, or set it to a PostgreSQL server with pgvector, to run this test"
		if inCI() {
			t.Fatal(msg + " (CI=true: PostgreSQL tests may not be skipped)")
		}
		t.Skip(msg)
	}
	return base
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// databaseURL is base with its database replaced by name.
func databaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// templateLock is the advisory lock, taken in the server's base database,
// under which one process of a run builds the template while the others
// wait for it ("cairntpl" in ASCII).
const templateLock int64 = 0x636169726e74706c

// buildTemplate returns the name of the template database for the current
// migrations, building it unless it exists. The name carries a hash of the
// migrations, so that a changed file builds a new template; the database
// is built under another name and renamed when complete, so that a build
// that dies half-way is never copied.
func buildTemplate(base string) (string, error) {
	all, err := migrations.Load(migrations.Postgres)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range all {
		fmt.Fprintf(h, "%d %s %d\n%s\n", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	name := "cairn_tmpl_" + hex.EncodeToString(h.Sum(nil)[:8])

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock) //nolint:errcheck // the session ends next
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	for _, sql := range []string{`DROP DATABASE IF EXISTS ` + building + ` WITH (FORCE)`, `CREATE DATABASE ` + building} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return "", fmt.Errorf("%s: %w", sql, err)
		}
	}
	u, err := databaseURL(base, building)
	if err != nil {
		return "", err
	}
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return "", err
	}
	db := stdlib.OpenDB(*cfg)
	if _, err := db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA public`); err != nil {
		db.Close()
		return "", fmt.Errorf("create extension vector: %w", err)
	}
	_, err = migrations.Apply(ctx, db, migrations.Postgres)
	// Closed before the copies: PostgreSQL copies no database that has
	// sessions.
	db.Close()
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	return name, nil
}

// prepare creates the test database unless it exists, with the vector
// extension in its public schema (where every test schema's search_path
// finds it), and returns its URL.
func prepare(base string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+testDatabase); err != nil && !isDuplicate(err) {
		return "", err
	}
	u, err := databaseURL(base, testDatabase)
	if err != nil {
		return "", err
	}
	tconn, err := pgx.Connect(ctx, u)
	if err != nil {
		return "", err
	}
	defer tconn.Close(ctx)
	if _, err := tconn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA public`); err != nil && !isDuplicate(err) {
		return "", fmt.Errorf("create extension vector: %w", err)
	}
	return u, nil
}

// isDuplicate reports whether err says the object exists already; two
// packages' test binaries may create it at the same moment.
func isDuplicate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505" || pgErr.Code == "42710")
}

func exec(t testing.TB, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := adminPool(ctx, dsn)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	if _, err := pool.Exec(ctx, sql); err != nil {
		t.Fatalf("postgres: %s: %v", sql, err)
	}
}

// adminPools holds, per DSN, the connections exec runs its statements on
// for the life of the test binary. A connection a statement made a
// server process for (forked, its catalog caches loaded) and closed again:
// two per test, a fifth of the suite's PostgreSQL backends.
var adminPools struct {
	sync.Mutex
	m map[string]*pgxpool.Pool
}

func adminPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	adminPools.Lock()
	defer adminPools.Unlock()
	if p, ok := adminPools.m[dsn]; ok {
		return p, nil
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if adminPools.m == nil {
		adminPools.m = map[string]*pgxpool.Pool{}
	}
	adminPools.m[dsn] = p
	return p, nil
}

var logMu sync.Mutex

func record(t testing.TB) {
	path := os.Getenv(EnvLog)
	if path == "" {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strings.ReplaceAll(t.Name(), " ", "_"))
}

func inCI() bool {
	switch os.Getenv("CI") {
	case "true", "TRUE", "True", "1":
		return true
	}
	return false
}

// Querier is what TablesHolding reads through: a *pgx.Conn or a
// *pgxpool.Pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TablesHolding returns, by table, how many rows of each table of the
// current schema hold s (any case) in any column, as text: the proofs of
// erasure (issue 37) search every table for a marker string.
func TablesHolding(ctx context.Context, q Querier, s string) (map[string]int, error) {
	rows, err := q.Query(ctx, `SELECT quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(tables) < 10 {
		return nil, fmt.Errorf("pgtest: the schema has %d tables: is it migrated?", len(tables))
	}
	out := map[string]int{}
	for _, table := range tables {
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM `+table+` x WHERE strpos(lower(x::text), lower($1)) > 0`, s).Scan(&n); err != nil {
			return nil, fmt.Errorf("pgtest: search %s: %w", table, err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out, nil
}
