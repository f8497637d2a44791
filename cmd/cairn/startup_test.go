package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// TestStartupErrors starts the binary on PostgreSQL servers that cannot
// serve it and checks what a person sees: exit status 1 and one line on
// stderr that names the problem and what to do, never a stack trace.
func TestStartupErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// A port nothing listens on: take one and give it back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	tests := []struct {
		name string
		url  func(t *testing.T) string
		want []string
	}{
		{"Unreachable", func(*testing.T) string { return "postgres://cairn@" + closed + "/cairn?connect_timeout=5" },
			[]string{"server unreachable", closed, "is PostgreSQL running"}},
		{"BadURL", func(*testing.T) string { return "postgres://[::1" },
			[]string{"invalid database URL"}},
		{"WrongCredentials", func(t *testing.T) string {
			return withURL(t, pgtest.URL(t), func(u *url.URL) { u.User = url.UserPassword("cairn_no_such_user", "wrong") })
		}, []string{"authentication failed", "cairn_no_such_user", "check the user and password"}},
		{"NoDatabase", func(t *testing.T) string {
			return withURL(t, pgtest.URL(t), func(u *url.URL) { u.Path = "/cairn_no_such_database" })
		}, []string{"database does not exist", "cairn_no_such_database"}},
		{"NoVectorPrivilege", noVectorURL, []string{"not allowed to create the vector extension", "CREATE EXTENSION vector"}},
	}
	for _, tc := range tests {
		for _, command := range []string{"serve", "stdio", "migrate"} {
			t.Run(tc.name+"/"+command, func(t *testing.T) {
				cmd := exec.Command(cairnBinary(t), command, "--data-dir", t.TempDir())
				if command == "serve" {
					cmd.Args = append(cmd.Args, "--addr", "127.0.0.1:0")
				}
				cmd.Env = append(os.Environ(), "CAIRN_DATABASE_URL="+tc.url(t), "CAIRN_OWNER_KEY="+testOwnerKey)
				runStartupError(t, cmd, "cairn "+command+": ", tc.want)
			})
		}
	}
}

// runStartupError runs cmd, a start that must fail, and checks what a
// person sees: exit status 1, one line on stderr (the model warning of a
// build without the model aside) that starts with prefix and says each of
// want, no stack trace, nothing on stdout. It returns the line.
func runStartupError(t *testing.T, cmd *exec.Cmd, prefix string, want []string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit: %v, want status %d\nstderr:\n%s", err, exitError, stderr.String())
	}
	msg := withoutModelWarning(stderr.String())
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, prefix) {
		t.Errorf("stderr is not one line starting with %q:\n%s", prefix, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("stderr %q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("stderr shows a stack trace:\n%s", msg)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout is not empty:\n%s", stdout.String())
	}
	return msg
}

// withURL returns raw changed by edit.
func withURL(t *testing.T, raw string, edit func(*url.URL)) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	edit(u)
	return u.String()
}

// noVectorURL returns the URL of a database without the vector extension,
// for a role that may not create it: a fresh database on the test server,
// and a role without superuser rights, both dropped when the test ends.
func noVectorURL(t *testing.T) string {
	base := withURL(t, pgtest.URL(t), func(u *url.URL) { u.RawQuery = "" })
	ctx := context.WithoutCancel(t.Context())
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := "cairn_novector_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	// A password, so that the role can sign in whether the server trusts
	// loopback connections of every role or only of its superuser (what
	// scripts/provision-postgres.sh configures on a fresh machine).
	password := rand.Text()
	for _, sql := range []string{
		`DROP DATABASE IF EXISTS ` + name,
		`DROP ROLE IF EXISTS ` + name,
		`CREATE ROLE ` + name + ` LOGIN NOSUPERUSER PASSWORD '` + password + `'`,
		`CREATE DATABASE ` + name,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("clean up: %v", err)
			return
		}
		defer conn.Close(ctx)
		for _, sql := range []string{`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`, `DROP ROLE IF EXISTS ` + name} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
	})
	return withURL(t, base, func(u *url.URL) {
		u.User = url.UserPassword(name, password)
		u.Path = "/" + name
	})
}
