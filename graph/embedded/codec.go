package embedded

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
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

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("graph/embedded: encode: %w", err)
	}
	return string(b), nil
}

// decodeJSON decodes s into v keeping numbers exact (json.Number).
func decodeJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("graph/embedded: decode: %w", err)
	}
	return nil
}

// decodeMap and decodeStringMap skip the decoder for the empty object,
// which most relationships' metadata and provenance are: a traversal reads
// thousands of them.
func decodeMap(s string) (map[string]any, error) {
	m := map[string]any{}
	if s == "" || s == "{}" {
		return m, nil
	}
	if err := decodeJSON(s, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeStringMap(s string) (map[string]string, error) {
	m := map[string]string{}
	if s == "" || s == "{}" {
		return m, nil
	}
	if err := decodeJSON(s, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeAny(s string) (any, error) {
	var v any
	if err := decodeJSON(s, &v); err != nil {
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
