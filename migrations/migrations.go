// Package migrations holds Cairn's schema migrations, embedded in the binary,
// and the runner that applies them.
//
// Each backend has its own numbered files (sqlite/NNN_name.sql,
// postgres/NNN_name.sql). The runner applies pending files in order, one
// transaction per file, and records each in the table cairn_schema_migrations.
// Concurrent runners are safe: on PostgreSQL they serialise on a session
// advisory lock, on SQLite on the database's write lock (BEGIN IMMEDIATE), and
// each re-checks the version table under the lock before applying a file.
//
// The graph in Neo4j has its own files, neo4j/NNN_name.cypher (LoadCypher);
// graph/neo4j applies them.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"time"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Dialect names a backend whose migrations live in the directory of that name.
type Dialect string

// The dialects Cairn ships migrations for.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Status reports whether a migration has been applied, and when.
type Status struct {
	Migration
	Applied   bool
	AppliedAt time.Time
}

// advisoryLockKey is the PostgreSQL advisory lock that serialises migration
// runners. It is an arbitrary constant ("cairn" in ASCII) shared by every
// Cairn process.
const advisoryLockKey int64 = 0x636169726e

var fileName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.sql$`)

// Load returns the migrations of a dialect, ordered by version. Two files with
// the same version, or a file whose name is not NNN_name.sql, are errors.
func Load(d Dialect) ([]Migration, error) {
	entries, err := fs.ReadDir(files, string(d))
	if err != nil {
		return nil, fmt.Errorf("migrations: unknown dialect %q: %w", d, err)
	}
	var out []Migration
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: %s/%s: name must be NNN_name.sql", d, e.Name())
		}
		body, err := files.ReadFile(path.Join(string(d), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", e.Name(), err)
		}
		v, _ := strconv.Atoi(m[1])
		if len(out) > 0 && out[len(out)-1].Version == v {
			return nil, fmt.Errorf("migrations: %s: version %03d used twice", d, v)
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(body)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	return out, nil
}

const createVersionTable = `CREATE TABLE IF NOT EXISTS cairn_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)`

// Apply brings db up to the newest migration of dialect d and returns the
// migrations it applied (none when the schema is current).
func Apply(ctx context.Context, db *sql.DB, d Dialect) ([]Migration, error) {
	all, err := Load(d)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close()

	if d == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, advisoryLockKey); err != nil {
			return nil, fmt.Errorf("migrations: take advisory lock: %w", err)
		}
		defer func() {
			// A fresh context: the caller's may be cancelled, and a lock left
			// held would block every other runner until this session ends.
			unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = conn.ExecContext(unlockCtx, `SELECT pg_advisory_unlock($1)`, advisoryLockKey)
		}()
	}
	if _, err := conn.ExecContext(ctx, createVersionTable); err != nil {
		return nil, fmt.Errorf("migrations: create version table: %w", err)
	}

	// Versions once recorded stay recorded: those read here need no
	// transaction of their own (applyOne reads the table again, under the
	// lock, for the others). A store opened at the current version runs
	// one query rather than three statements a migration.
	done := map[int]bool{}
	rows, err := conn.QueryContext(ctx, `SELECT version FROM cairn_schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrations: read version table: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("migrations: read version table: %w", err)
		}
		done[v] = true
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("migrations: read version table: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read version table: %w", err)
	}
	var applied []Migration
	for _, m := range all {
		if done[m.Version] {
			continue
		}
		did, err := applyOne(ctx, conn, d, m)
		if err != nil {
			return applied, err
		}
		if did {
			applied = append(applied, m)
		}
	}
	return applied, nil
}

// applyOne applies m in its own transaction unless the version table, read
// under the lock, says it already ran.
func applyOne(ctx context.Context, conn *sql.Conn, d Dialect, m Migration) (applied bool, err error) {
	begin, commit, rollback := "BEGIN", "COMMIT", "ROLLBACK"
	if d == SQLite {
		// IMMEDIATE takes the write lock now, so two processes cannot both
		// decide that the same migration is pending.
		begin = "BEGIN IMMEDIATE"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return false, fmt.Errorf("migrations: begin %03d_%s: %w", m.Version, m.Name, err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), rollback)
		}
	}()
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM cairn_schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
		return false, fmt.Errorf("migrations: read version table: %w", err)
	}
	if n > 0 {
		_, err = conn.ExecContext(ctx, commit)
		return false, err
	}
	if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("migrations: apply %03d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO cairn_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return false, fmt.Errorf("migrations: record %03d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := conn.ExecContext(ctx, commit); err != nil {
		return false, fmt.Errorf("migrations: commit %03d_%s: %w", m.Version, m.Name, err)
	}
	return true, nil
}

// List reports every migration of dialect d and whether db has it. A database
// that was never migrated reports all migrations as pending.
func List(ctx context.Context, db *sql.DB, d Dialect) ([]Status, error) {
	all, err := Load(d)
	if err != nil {
		return nil, err
	}
	done := map[int]time.Time{}
	rows, err := db.QueryContext(ctx, `SELECT version, applied_at FROM cairn_schema_migrations`)
	if err == nil {
		for rows.Next() {
			var v int
			var at int64
			if err := rows.Scan(&v, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("migrations: read version table: %w", err)
			}
			done[v] = time.UnixMicro(at).UTC()
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("migrations: read version table: %w", err)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("migrations: read version table: %w", err)
		}
	} else if !isMissingTable(err) {
		return nil, fmt.Errorf("migrations: read version table: %w", err)
	}
	out := make([]Status, len(all))
	for i, m := range all {
		at, ok := done[m.Version]
		out[i] = Status{Migration: m, Applied: ok, AppliedAt: at}
	}
	return out, nil
}

// isMissingTable reports whether err says the version table does not exist,
// in the words of either backend.
func isMissingTable(err error) bool {
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) && coded.SQLState() == "42P01" {
		return true
	}
	return regexp.MustCompile(`no such table|does not exist`).MatchString(err.Error())
}
