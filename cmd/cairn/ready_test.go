package main

import (
	"database/sql"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/mcp"
)

// readOnly is how a test makes a store refuse writes. Tests run as root,
// whom file permissions do not stop, so each backend is asked by the
// database's own means: SQLite opens the file with mode=ro (what it falls
// back to when the file cannot be opened for writing), and PostgreSQL
// sessions start with default_transaction_read_only on (what a read-only
// database or role looks like to a client; a standby refuses writes with
// the same SQLSTATE 25006).
var readOnlyBackends = []struct {
	name string
	// open opens a migrated app on a store of this backend.
	open func(t *testing.T) *app
	// readOnly returns a's backend with its writes going through a
	// read-only handle on the same store.
	readOnly func(t *testing.T, a *app) *backend
}{
	{"Embedded", func(t *testing.T) *app {
		return openTestApp(t, appConfig{dataDir: t.TempDir()})
	}, func(t *testing.T, a *app) *backend {
		ro, err := sql.Open("sqlite", "file:"+a.backend.sqlite.Path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ro.Close() })
		b := *a.backend
		b.control = ro
		return &b
	}},
	{"Postgres", func(t *testing.T) *app {
		return openTestApp(t, appConfig{databaseURL: pgtest.URL(t)})
	}, func(t *testing.T, a *app) *backend {
		ro, err := postgres.Open(t.Context(), readOnlyURL(t, a), postgres.Options{SkipMigrations: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ro.Close() })
		b := *a.backend
		b.control, b.postgres = ro.SQL, ro
		return &b
	}},
}

// readOnlyURL is the URL of a's PostgreSQL schema for sessions that are
// read-only by default.
func readOnlyURL(t *testing.T, a *app) string {
	t.Helper()
	return a.backend.postgres.Pool.Config().ConnString() + "&default_transaction_read_only=on"
}

func openTestApp(t *testing.T, cfg appConfig) *app {
	t.Helper()
	a, err := openApp(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// TestReadyzRefusesReadOnlyStore checks that /readyz answers 200 on a store
// that takes writes and 503 on one that answers reads but refuses writes.
func TestReadyzRefusesReadOnlyStore(t *testing.T) {
	for _, b := range readOnlyBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			a := b.open(t)
			srv := httptest.NewServer(a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth, Ready: a.ready}))
			defer srv.Close()
			readyz := func() int {
				t.Helper()
				resp, err := http.Get(srv.URL + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := readyz(); code != http.StatusOK {
				t.Fatalf("/readyz on a writable store = %d, want 200", code)
			}
			writable := a.backend
			a.backend = b.readOnly(t, a)
			if err := a.backend.ping(t.Context()); err != nil {
				t.Fatalf("the read-only store does not answer: %v", err)
			}
			if err := a.ready(t.Context()); !errors.Is(err, errNotWritable) {
				t.Errorf("ready on a read-only store: %v, want %v", err, errNotWritable)
			}
			if code := readyz(); code != http.StatusServiceUnavailable {
				t.Errorf("/readyz on a read-only store = %d, want 503", code)
			}
			a.backend = writable
			if code := readyz(); code != http.StatusOK {
				t.Errorf("/readyz on the writable store again = %d, want 200", code)
			}
		})
	}
}

// TestStartRefusesReadOnlyDatabase starts serve and stdio on a migrated
// PostgreSQL schema whose sessions are read-only, and checks that they
// refuse with one line that says so and what to do.
func TestStartRefusesReadOnlyDatabase(t *testing.T) {
	a := openTestApp(t, appConfig{databaseURL: pgtest.URL(t)})
	url := readOnlyURL(t, a)
	for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"stdio"}} {
		t.Run(args[0], func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(t.Context(), append(args, "--data-dir", t.TempDir()), &environment{
				stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				getenv: func(k string) string { return map[string]string{"CAIRN_DATABASE_URL": url}[k] },
			})
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if code != exitError || strings.Contains(msg, "\n") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and one line", code, msg, exitError)
			}
			for _, want := range []string{"cairn " + args[0] + ": the store cannot be written: postgres ", "read-only transaction", "not a standby"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q does not say %q", msg, want)
				}
			}
		})
	}
}
