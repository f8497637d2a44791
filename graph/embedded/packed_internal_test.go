package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// pack is packedRows' format, written in Go.
func pack(rows ...[]string) []byte {
	var b []byte
	for _, r := range rows {
		for _, v := range r {
			b = fmt.Appendf(b, "%d ", len(v))
		}
		for _, v := range r {
			b = append(b, v...)
		}
	}
	return b
}

func TestUnpackRows(t *testing.T) {
	rows := [][]string{
		{"ent_1", "ent 2", "person", "org"},
		{"", "12 34", "x\x1ey\x00z", "é 世界"},
		{"9", "9 9", " ", "ent_1"},
	}
	var got [][]string
	n, err := unpackRows(pack(rows...), make([][]byte, 4), func(f [][]byte) {
		var r []string
		for _, v := range f {
			r = append(r, string(v))
		}
		got = append(got, r)
	})
	if err != nil || n != len(rows) {
		t.Fatalf("unpackRows: %d rows, %v; want %d", n, err, len(rows))
	}
	if !slices.EqualFunc(got, rows, slices.Equal) {
		t.Errorf("unpackRows: %q, want %q", got, rows)
	}
	if n, err := unpackRows(nil, make([][]byte, 4), func([][]byte) { t.Error("a row of nothing") }); n != 0 || err != nil {
		t.Errorf("unpackRows of nothing: %d, %v", n, err)
	}
	for _, bad := range []string{
		"1 1 ab",          // two columns of three
		"1 1 1 abc2 1 1 ", // a second row cut short
		"1 1 5 abcd",      // a value past the end
		"1 x 1 abc",       // not a length
		" 1 1 abc",        // an empty length
		"1 1 1",           // lengths without values
		"99999999999999999999999999 1 1 abc",
	} {
		if _, err := unpackRows([]byte(bad), make([][]byte, 3), func([][]byte) {}); !errors.Is(err, errPacked) {
			t.Errorf("unpackRows(%q): %v, want errPacked", bad, err)
		}
	}
}

// TestDegreesInChunks: the degrees of a user with more live relationships
// than one packed value holds, read in chunks, are those written
// (graphtest.CheckDegrees, which the conformance suite runs with every
// relationship read at once).
func TestDegreesInChunks(t *testing.T) {
	defer func(n int) { packChunk = n }(packChunk)
	packChunk = 97
	graphtest.CheckDegrees(t, graph.NewStore(New(sqlitetest.Open(t))))
}

// TestLiveEdgeEndsIsCovered: the degree pass of a context load walks an
// index and reads no relationship row (migration 017), and read in chunks
// it does not sort.
func TestLiveEdgeEndsIsCovered(t *testing.T) {
	db := sqlitetest.Open(t)
	for _, c := range []struct {
		name, query string
		args        []any
	}{
		{"count", `SELECT count(*) FROM ` + liveEdgeEndsFrom, []any{"usr_1"}},
		{"at once", packedRows(liveEdgeEndCols, liveEdgeEndsFrom, ""), []any{"usr_1"}},
		{"in chunks", packedRows(liveEdgeEndCols, liveEdgeEndsFrom, liveEdgeEndOrder), []any{"usr_1", 0}},
	} {
		plan, err := sqlite.QueryPlan(context.Background(), db.Read, c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(plan, "COVERING INDEX relationships_out") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("plan of the degree pass %s: %s; want a covering index and no sort", c.name, plan)
		}
	}
}
