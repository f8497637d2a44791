// Package pgtest gives each test a PostgreSQL schema of its own, in a test
// database on the server that CAIRN_TEST_DATABASE_URL names.
//
// Without that variable, tests that need PostgreSQL skip with one line that
// says how to enable them; under CI=true they fail instead, so that a broken
// provisioning step cannot pass as a green run. scripts/test sets the
// variable (see scripts/provision-postgres.sh).
//
// Schemas rather than databases keep a store's setup cheap (CREATE SCHEMA is
// fast; CREATE DATABASE copies a template), and let every package, and every
// parallel test inside one, work side by side on the same server.
package pgtest

import (
	"context"
	"crypto/rand"
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

// URL returns the URL of a new, empty schema in the test database, with the
// vector extension usable in it, and drops the schema when the test ends.
// Connections made with the URL have search_path set to that schema.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		msg := "postgres: " + EnvURL + " is not set; run scripts/test, or set it to a PostgreSQL server with pgvector, to run this test"
		if inCI() {
			t.Fatal(msg + " (CI=true: PostgreSQL tests may not be skipped)")
		}
		t.Skip(msg)
	}
	setup.Do(func() { setup.url, setup.err = prepare(base) })
	if setup.err != nil {
		t.Fatalf("postgres: prepare the test database: %v", setup.err)
	}

	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
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
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + testDatabase
	tconn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return "", err
	}
	defer tconn.Close(ctx)
	if _, err := tconn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA public`); err != nil && !isDuplicate(err) {
		return "", fmt.Errorf("create extension vector: %w", err)
	}
	return u.String(), nil
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
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("postgres: %s: %v", sql, err)
	}
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
