package postgres_test

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/pgvector/pgvector-go"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/migrations"
)

func TestOpenMigrates(t *testing.T) {
	dsn := pgtest.EmptyURL(t)
	db, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	status, err := migrations.List(t.Context(), db.SQL, migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if !s.Applied {
			t.Errorf("migration %03d_%s not applied", s.Version, s.Name)
		}
	}
	var v pgvector.Vector
	if err := db.Pool.QueryRow(t.Context(), `SELECT '[1,2,3]'::vector`).Scan(&v); err != nil || len(v.Slice()) != 3 {
		t.Errorf("vector type through the pool: %v, %v", v, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dsn := pgtest.URL(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// A port nothing listens on: take one and give it back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	unreachable := *u
	unreachable.Host = closed
	wrongUser := *u
	wrongUser.User = url.UserPassword("cairn_no_such_user", "wrong")
	noDB := *u
	noDB.Path = "/cairn_no_such_database"

	for _, tc := range []struct {
		name string
		url  string
		want error
	}{
		{"Unreachable", unreachable.String() + "&connect_timeout=2", postgres.ErrUnreachable},
		{"WrongCredentials", wrongUser.String(), postgres.ErrAuth},
		{"NoDatabase", noDB.String(), postgres.ErrNoDatabase},
		{"BadURL", "postgres://[::1", postgres.ErrBadURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.Open(t.Context(), tc.url, postgres.Options{})
			if !errors.Is(err, tc.want) {
				t.Errorf("Open: err = %v, want %v", err, tc.want)
			}
			if err != nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
					t.Errorf("error shows the password: %v", err)
				}
			}
		})
	}
}

// TestMigrateAndStatus checks the pool-less pair behind `cairn migrate`:
// Status changes nothing, Migrate applies what is pending and reports it,
// and a second Migrate finds nothing to do.
func TestMigrateAndStatus(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.EmptyURL(t)
	all, err := migrations.Load(migrations.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	applied := func(status []migrations.Status) int {
		n := 0
		for _, s := range status {
			if s.Applied {
				n++
			}
		}
		return n
	}
	for range 2 {
		status, err := postgres.Status(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if len(status) != len(all) || applied(status) != 0 {
			t.Fatalf("Status of an empty schema: %d migrations, %d applied; want %d, none", len(status), applied(status), len(all))
		}
	}
	did, err := postgres.Migrate(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if len(did) != len(all) {
		t.Errorf("Migrate applied %d migrations, want %d", len(did), len(all))
	}
	if did, err = postgres.Migrate(ctx, dsn); err != nil || len(did) != 0 {
		t.Errorf("Migrate again: applied %d, err %v; want none", len(did), err)
	}
	status, err := postgres.Status(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if applied(status) != len(all) {
		t.Errorf("Status after Migrate: %d applied, want %d", applied(status), len(all))
	}
	for _, fn := range []func() error{
		func() error { _, err := postgres.Status(ctx, "postgres://[::1"); return err },
		func() error { _, err := postgres.Migrate(ctx, "postgres://[::1"); return err },
	} {
		if err := fn(); !errors.Is(err, postgres.ErrBadURL) {
			t.Errorf("bad URL: err = %v, want ErrBadURL", err)
		}
	}
}
