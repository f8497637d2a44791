package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/migrations"
)

// TestMigrateConcurrently starts two `cairn migrate` processes at the same
// moment on an empty store, on each backend: both must succeed, and between
// them every migration must be applied exactly once.
func TestMigrateConcurrently(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, b := range e2eBackends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t, true)
			dialect := migrations.Postgres
			if b.usesDataDir {
				dialect = migrations.SQLite
			}
			all, err := migrations.Load(dialect)
			if err != nil {
				t.Fatal(err)
			}
			dataDir := filepath.Join(t.TempDir(), "data")
			migrate := func(args ...string) *exec.Cmd {
				cmd := exec.Command(cairnBinary(t), append([]string{"migrate", "--data-dir", dataDir}, args...)...)
				cmd.Env = append(os.Environ(), env...)
				return cmd
			}

			var cmds [2]*exec.Cmd
			var outs [2]bytes.Buffer
			for i := range cmds {
				cmds[i] = migrate()
				cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
			}
			for _, cmd := range cmds {
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
			}
			applied := map[string]int{}
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Errorf("migrate #%d: %v\n%s", i+1, err, outs[i].String())
				}
				for _, line := range strings.Split(outs[i].String(), "\n") {
					if name, ok := strings.CutPrefix(line, "applied "); ok {
						applied[name]++
					}
				}
			}
			for _, m := range all {
				name := fmt.Sprintf("%03d_%s", m.Version, m.Name)
				if applied[name] != 1 {
					t.Errorf("%s applied %d times by the two processes, want once\n#1:\n%s#2:\n%s", name, applied[name], outs[0].String(), outs[1].String())
				}
				delete(applied, name)
			}
			if len(applied) > 0 {
				t.Errorf("the processes applied unknown migrations: %v", applied)
			}

			status, err := migrate("--status").CombinedOutput()
			if err != nil {
				t.Fatalf("migrate --status: %v\n%s", err, status)
			}
			if want := fmt.Sprintf("%d applied, 0 pending", len(all)); !strings.Contains(string(status), want) {
				t.Errorf("migrate --status after both:\n%s\nwant %q", status, want)
			}
		})
	}
}

// TestMigrateStatusChangesNothing checks that --status on a store that was
// never migrated leaves the store as it was (on PostgreSQL it lists every
// migration as pending; where the data directory holds no embedded store it
// says so and exits 1), and that migrate then applies them all.
func TestMigrateStatusChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, b := range e2eBackends {
		t.Run(b.name, func(t *testing.T) {
			env := b.env(t, true)
			dialect := migrations.Postgres
			if b.usesDataDir {
				dialect = migrations.SQLite
			}
			all, err := migrations.Load(dialect)
			if err != nil {
				t.Fatal(err)
			}
			dataDir := filepath.Join(t.TempDir(), "data")
			runExit := func(args ...string) (string, error) {
				t.Helper()
				cmd := exec.Command(cairnBinary(t), append([]string{"migrate", "--data-dir", dataDir}, args...)...)
				cmd.Env = append(os.Environ(), env...)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			run := func(args ...string) string {
				t.Helper()
				out, err := runExit(args...)
				if err != nil {
					t.Fatalf("migrate %v: %v\n%s", args, err, out)
				}
				return out
			}
			pending := fmt.Sprintf("0 applied, %d pending", len(all))
			noStore := "cairn migrate: no Cairn store at " + dataDir + ": run cairn serve (or cairn migrate) first, or pass --data-dir\n"
			for range 2 {
				if !b.usesDataDir {
					if out := run("--status"); !strings.Contains(out, pending) || strings.Contains(out, " applied ") {
						t.Errorf("migrate --status on an empty store:\n%s\nwant every migration pending (%q)", out, pending)
					}
					continue
				}
				var exit *exec.ExitError
				if out, err := runExit("--status"); !errors.As(err, &exit) || exit.ExitCode() != exitError || out != noStore {
					t.Errorf("migrate --status without a store: %v\n%s\nwant exit status %d and %q", err, out, exitError, noStore)
				}
			}
			if _, err := os.Stat(dataDir); err == nil {
				t.Errorf("migrate --status created the data directory %s", dataDir)
			}
			if out := run(); appliedLines(out) != len(all) {
				t.Errorf("migrate on an empty store:\n%s\nwant %d migrations applied", out, len(all))
			}
			if out := run(); !strings.Contains(out, "up to date, nothing to apply") {
				t.Errorf("migrate again:\n%s\nwant nothing to apply", out)
			}
		})
	}
}

// appliedLines counts the lines of migrate's output that report a migration
// applied.
func appliedLines(out string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "applied ") {
			n++
		}
	}
	return n
}
