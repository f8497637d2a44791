package embedded

import (
	"bytes"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

// Times are stored as Unix microseconds; zero times as NULL.

func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

func decodeAny(s string) (any, error) {
	var v any
	if err := jsoncodec.Decode(s, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// placeholders returns "$first, $first+1, …" for n parameters.
func placeholders(first, n int) string {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(first + i))
	}
	return b.String()
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// notFound reports that the row of kind what with this id does not exist.
func notFound(what, id string) error {
	return &graph.NotFoundError{What: what, ID: id}
}

// SQLite extended result codes for violated constraints.
const (
	sqliteConstraintNotNull    = 1299
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// isUniqueViolation reports whether err is SQLite's constraint failure on a
// primary key or unique index.
func isUniqueViolation(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	return coded.Code() == sqliteConstraintPrimaryKey || coded.Code() == sqliteConstraintUnique
}

// isNotNullViolation reports whether err is SQLite's NOT NULL constraint
// error.
func isNotNullViolation(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code() == sqliteConstraintNotNull
}

func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func limitOr(p graph.Page, def int) int {
	if p.Limit <= 0 {
		return def
	}
	return p.Limit
}

// maxParams bounds the parameters of one multi-row statement, far below
// SQLite's limit (32,766), so that a statement stays cheap to prepare.
const maxParams = 10_000

// rowChunk is how many rows of cols parameters each one statement takes.
func rowChunk(cols int) int { return max(1, maxParams/cols) }

// valueRows returns "(?, …), (?, …), …": n rows of cols parameters each.
//
// Statements with many parameters use anonymous ones (?): SQLite keeps the
// names of numbered and named ones ($1) in a list that it searches from the
// start for each, both when it parses the statement and when the driver
// binds it, which makes a statement of n of them cost n² (a multi-row
// insert of 100 entities spent more time there than writing the rows).
func valueRows(n, cols int) string {
	row := "(" + qmarks(cols) + ")"
	var b bytes.Buffer
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// qmarks returns "?, ?, …" for n anonymous parameters (see valueRows).
func qmarks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// chunks calls fn with consecutive windows [start, end) of at most size
// of n items, stopping at the first error.
func chunks(n, size int, fn func(start, end int) error) error {
	for start := 0; start < n; start += size {
		if err := fn(start, min(start+size, n)); err != nil {
			return err
		}
	}
	return nil
}
