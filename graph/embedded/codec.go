package embedded

import (
	"bytes"
	"database/sql"
	"errors"
	"strconv"
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
