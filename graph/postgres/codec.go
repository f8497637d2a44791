package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnkg/cairn/graph"
)

// Maps are stored as JSONB through jsoncodec, read back with numbers kept
// exact (json.Number), as every graph driver returns them.

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orEmptyStrings(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Times are TIMESTAMPTZ; a zero time.Time is stored as NULL where the column
// allows it, and every time read back is in UTC.

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromNullTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// notFound reports that the row of kind what with this id does not exist.
func notFound(what, id string) error {
	return &graph.NotFoundError{What: what, ID: id}
}

func conflict(what, id string) error {
	return fmt.Errorf("graph/postgres: %s %s: %w", what, id, graph.ErrConflict)
}

func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// wrap adds what the driver was doing to err; the PostgreSQL error stays
// reachable with errors.As, so that Update can tell a conflict to retry.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("graph/postgres: %s: %w", what, err)
}

// inserted turns the result of an INSERT … ON CONFLICT DO NOTHING into
// ErrConflict when no row went in. Avoiding the unique violation itself
// keeps the transaction usable: PostgreSQL aborts a transaction at its first
// error, and callers may go on after a conflict (knowledge does).
func inserted(tag pgconn.CommandTag, err error, what, id string) error {
	if err != nil {
		return wrap("insert "+what, err)
	}
	if tag.RowsAffected() == 0 {
		return conflict(what, id)
	}
	return nil
}

// insertedAll is inserted for a statement that inserts a row per id: fewer
// rows than ids means that some id existed (or was given twice).
func insertedAll(tag pgconn.CommandTag, err error, what string, ids []string) error {
	if err != nil {
		return wrap("insert "+what+"s", err)
	}
	if n := int(tag.RowsAffected()); n < len(ids) {
		if len(ids) == 1 {
			return conflict(what, ids[0])
		}
		return conflict(what, fmt.Sprintf("(%d of %d, from %s)", len(ids)-n, len(ids), ids[0]))
	}
	return nil
}

func limitOr(p graph.Page, def int) int {
	if p.Limit <= 0 {
		return def
	}
	return p.Limit
}

// rowScanner is what pgx.Row and pgx.Rows share.
type rowScanner interface{ Scan(...any) error }

// query runs sql and reads every row with scan.
func query[T any](ctx context.Context, t *tx, scan func(rowScanner) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// args accumulates the parameters of a query built from optional filters.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}
