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
	dsn := pgtest.URL(t)
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
