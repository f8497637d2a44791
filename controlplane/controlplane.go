// Package controlplane keeps Cairn's relational control plane: users, agents,
// API keys, consent rules, the append-only audit log and rate-limit
// counters (and, as they arrive, profiles).
//
// One implementation serves both backends: the SQL is written once, in the
// subset SQLite and PostgreSQL share ($n parameters, ON CONFLICT,
// RETURNING), over database/sql. On PostgreSQL the *sql.DB wraps the
// process's single pgx pool. Timestamps are Unix microseconds in BIGINT
// columns, which both backends compare and order alike.
package controlplane

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/migrations"
)

// Errors the control plane returns; callers test with errors.Is.
var (
	ErrNotFound = errors.New("controlplane: not found")
	ErrExists   = errors.New("controlplane: already exists")
)

// Store is the control plane on one database.
type Store struct {
	db      *sql.DB
	dialect migrations.Dialect
	now     func() time.Time
	// dict caches the audit log's dictionaries (auditdict.go).
	dict *auditDict
}

// New returns a Store on db, which must already be migrated.
func New(db *sql.DB, dialect migrations.Dialect) *Store {
	return &Store{db: db, dialect: dialect, now: time.Now, dict: newAuditDict()}
}

// DB returns the database the store works on.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns which backend the store runs on.
func (s *Store) Dialect() migrations.Dialect { return s.dialect }

// tx runs fn in a transaction. On SQLite every transaction takes the write
// lock at BEGIN; on PostgreSQL, lock names an advisory lock to hold until
// commit (0 for none), for read-check-write sequences that must not
// interleave.
func (s *Store) tx(ctx context.Context, lock int64, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("controlplane: begin: %w", err)
	}
	if lock != 0 && s.dialect == migrations.Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lock); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("controlplane: lock: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("controlplane: commit: %w", err)
	}
	return nil
}

// newID returns a random id with a prefix.
func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// newUUID returns a random RFC 4122 version 4 UUID, the form the
// specifications give user ids.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

// isUnique reports whether err is a unique-constraint violation on either
// backend.
func isUnique(err error) bool {
	if err == nil {
		return false
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		return coded.SQLState() == "23505"
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "PRIMARY KEY constraint failed") ||
		strings.Contains(msg, "duplicate key value")
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("controlplane: %s: %w", what, err)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
