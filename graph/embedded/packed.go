package embedded

import (
	"bytes"
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
// two types of 20,000 relationships took 14 ms, of which walking the
// index was under 2. A query that returns many small rows can instead have
// SQLite pack them into one value, read in one call: the same list comes
// back in 5 ms. Packing a few rows, or each row by itself, saves little or
// nothing; prefixing each value with its length, so that any bytes could
// be packed, cost 3.5 ms more than separators.

// The separators of packed rows: ASCII's unit separator between the
// columns of a row, its record separator between rows. A value may hold
// them (an imported id, say): unpack then finds more of them than the rows
// it was told of can have, and says so (errUnpackable).
const (
	unitSep   = '\x1f'
	recordSep = '\x1e'
)

// packChunk is how many rows one packed value holds at most, so that a
// user with a million relationships does not make SQLite build, and the
// driver copy, a value of a hundred megabytes. A variable for the tests.
var packChunk = 100_000

// errUnpackable is returned for packed rows whose values hold a separator:
// the rows must be read one by one.
var errUnpackable = errors.New("graph/embedded: a packed value holds a separator")

// packedRows returns the statement that packs the rows of `SELECT cols
// FROM from` (from: the FROM clause on, with its WHERE) into one value,
// with their number: the columns of a row joined by unitSep, the rows by
// recordSep. The columns must not be NULL. With order (an ORDER BY whose
// ties are rows alike in every column), the statement packs the chunk of
// at most packChunk rows at OFFSET ?, after the arguments of from; a
// subquery that costs a fifth more per row than packing every row at once.
func packedRows(cols []string, from, order string) string {
	row := strings.Join(cols, " || char(31) || ")
	if order != "" {
		from = `(SELECT ` + strings.Join(cols, ", ") + ` FROM ` + from + ` ORDER BY ` + order +
			` LIMIT ` + fmt.Sprint(packChunk) + ` OFFSET ?)`
	}
	return `SELECT count(*), group_concat(` + row + `, char(30)) FROM ` + from
}

// eachPackedRow calls fn with the columns of each row of `SELECT cols FROM
// from` (see packedRows), read packed: all at once when there are at most
// packChunk rows (a count first tells), else chunk by chunk in the order
// given, which must make the chunks partition the rows. When a value holds
// a separator, it calls restart, to forget the rows fn was given, and
// reads the rows again one by one. The fields are valid only during the
// call.
func (t *tx) eachPackedRow(ctx context.Context, cols []string, from, order string, args []any, restart func(), fn func(fields [][]byte)) error {
	err := t.eachPackedChunk(ctx, cols, from, order, args, fn)
	if !errors.Is(err, errUnpackable) {
		return err
	}
	restart()
	rows, err := t.query(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+from, args...)
	if err != nil {
		return err
	}
	fields := make([][]byte, len(cols))
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = (*sql.RawBytes)(&fields[i])
	}
	return eachRow(rows, func(r *sql.Rows) error {
		if err := r.Scan(dest...); err != nil {
			return err
		}
		fn(fields)
		return nil
	})
}

// eachPackedChunk is eachPackedRow without the fallback: it returns
// errUnpackable, having called fn for the rows of the chunks before.
func (t *tx) eachPackedChunk(ctx context.Context, cols []string, from, order string, args []any, fn func(fields [][]byte)) error {
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
		return unpackRows(packed, n, fields, fn)
	})
}

// unpackRows parses n packed rows of len(fields) columns (see packedRows)
// into fields and calls fn with each, or returns errUnpackable, calling fn
// for none, when the separators are not those of n such rows: the format
// puts n-1 record separators and n·(len(fields)-1) unit separators, and
// a value holding either adds to those counts, which no value can lower.
func unpackRows(b []byte, n int, fields [][]byte, fn func([][]byte)) error {
	if n == 0 {
		if len(b) != 0 {
			return errUnpackable
		}
		return nil
	}
	if bytes.Count(b, []byte{recordSep}) != n-1 || bytes.Count(b, []byte{unitSep}) != n*(len(fields)-1) {
		return errUnpackable
	}
	for range n {
		row := b
		if i := bytes.IndexByte(b, recordSep); i >= 0 {
			row, b = b[:i], b[i+1:]
		}
		for i := range fields[:len(fields)-1] {
			j := bytes.IndexByte(row, unitSep)
			fields[i], row = row[:j:j], row[j+1:]
		}
		fields[len(fields)-1] = row[:len(row):len(row)]
		fn(fields)
	}
	return nil
}
