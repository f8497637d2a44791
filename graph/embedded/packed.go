package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Reading a row through database/sql costs modernc.org/sqlite a call into
// SQLite per column, and two or three for a text column (its type, its
// bytes, its length), each taking the connection's mutex, which the driver
// opens SQLITE_OPEN_FULLMUTEX (not configurable): listing the two ends and
// two types of 20,000 relationships took 14 ms, of which scanning the
// index was under 2. A query that returns many small rows can instead have
// SQLite pack them into one value, read in one call: the same list comes
// back in 9 ms (a context load's listing of 10,000 entities with their
// degrees went from 31 to 24 ms). Packing a few rows, or packing each row
// by itself, saves little or nothing.

// packChunk is how many rows one packed value holds at most, so that a
// user with a million relationships does not make SQLite build, and the
// driver copy, a value of a hundred megabytes. A variable for the tests.
var packChunk = 100_000

// packedRows returns the statement that packs the rows of `SELECT cols
// FROM from` (from: the FROM clause on, with its WHERE) into one value,
// with their number: for each row, the byte length of each column followed
// by a space, then the columns' bytes one after the other. Lengths make
// the format hold any bytes a value may hold. The columns must not be
// NULL. With order (an ORDER BY whose ties are rows alike in every
// column), the statement packs the chunk of at most packChunk rows at
// OFFSET ?, after the arguments of from; a subquery that costs a fifth
// more per row than packing every row at once.
func packedRows(cols []string, from, order string) string {
	var row strings.Builder
	for _, c := range cols {
		row.WriteString("octet_length(" + c + ") || ' ' || ")
	}
	row.WriteString(strings.Join(cols, " || "))
	if order != "" {
		from = `(SELECT ` + strings.Join(cols, ", ") + ` FROM ` + from + ` ORDER BY ` + order +
			` LIMIT ` + fmt.Sprint(packChunk) + ` OFFSET ?)`
	}
	return `SELECT count(*), group_concat(` + row.String() + `, '') FROM ` + from
}

// eachPackedRow calls fn with the columns of each row of `SELECT cols FROM
// from` (see packedRows), read packed: all at once when there are at most
// packChunk rows (a count first tells), else chunk by chunk in the order
// given, which must make the chunks partition the rows. The fields are
// valid only during the call.
func (t *tx) eachPackedRow(ctx context.Context, cols []string, from, order string, args []any, fn func(fields [][]byte)) error {
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM `+from, args...).Scan(&total); err != nil {
		return err
	}
	if total == 0 {
		return nil
	}
	if total <= packChunk {
		return t.unpack(ctx, packedRows(cols, from, ""), args, len(cols), fn)
	}
	query := packedRows(cols, from, order)
	for offset := 0; offset < total; offset += packChunk {
		if err := t.unpack(ctx, query, append(args[:len(args):len(args)], offset), len(cols), fn); err != nil {
			return err
		}
	}
	return nil
}

// unpack runs a packedRows statement and calls fn with each row.
func (t *tx) unpack(ctx context.Context, query string, args []any, ncols int, fn func([][]byte)) error {
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return err
	}
	fields := make([][]byte, ncols)
	return eachRow(rows, func(r *sql.Rows) error {
		var (
			n      int
			packed sql.RawBytes
		)
		if err := r.Scan(&n, &packed); err != nil {
			return err
		}
		got, err := unpackRows(packed, fields, fn)
		if err == nil && got != n {
			err = fmt.Errorf("%w: %d rows for %d", errPacked, got, n)
		}
		return err
	})
}

// errPacked is returned for a packed value that does not parse.
var errPacked = errors.New("malformed packed rows")

// unpackRows parses packed rows of len(fields) columns (see packedQuery)
// into fields and calls fn with each; it returns how many there were.
func unpackRows(b []byte, fields [][]byte, fn func([][]byte)) (int, error) {
	var lens [8]int
	if len(fields) > len(lens) {
		return 0, fmt.Errorf("%w: %d columns", errPacked, len(fields))
	}
	rows := 0
	for len(b) > 0 {
		for i := range fields {
			n, k := 0, 0
			for ; k < len(b) && b[k] != ' '; k++ {
				c := b[k]
				if c < '0' || c > '9' || n > len(b) {
					return rows, fmt.Errorf("%w: row %d: bad length", errPacked, rows)
				}
				n = n*10 + int(c-'0')
			}
			if k == 0 || k == len(b) {
				return rows, fmt.Errorf("%w: row %d: bad length", errPacked, rows)
			}
			lens[i], b = n, b[k+1:]
		}
		for i := range fields {
			if lens[i] > len(b) {
				return rows, fmt.Errorf("%w: row %d: value past the end", errPacked, rows)
			}
			fields[i], b = b[:lens[i]:lens[i]], b[lens[i]:]
		}
		fn(fields)
		rows++
	}
	return rows, nil
}
