package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/graphtest"
)

// pack is packedRows' format, written in Go.
func pack(rows ...[]string) []byte {
	var recs []string
	for _, r := range rows {
		recs = append(recs, strings.Join(r, string(unitSep)))
	}
	return []byte(strings.Join(recs, string(recordSep)))
}

func TestUnpackRows(t *testing.T) {
	rows := [][]string{
		{"ent_1", "ent 2", "person", "org"},
		{"", "12 34", "x\x00z", "é 世界"},
		{"", "", "", ""},
		{"9", "9 9", " ", "ent_1"},
	}
	var got [][]string
	err := unpackRows(pack(rows...), len(rows), make([][]byte, 4), func(f [][]byte) {
		var r []string
		for _, v := range f {
			r = append(r, string(v))
		}
		got = append(got, r)
	})
	if err != nil {
		t.Fatalf("unpackRows: %v", err)
	}
	if !slices.EqualFunc(got, rows, slices.Equal) {
		t.Errorf("unpackRows: %q, want %q", got, rows)
	}
	if err := unpackRows(nil, 0, make([][]byte, 4), func([][]byte) { t.Error("a row of nothing") }); err != nil {
		t.Errorf("unpackRows of nothing: %v", err)
	}
	// A value that holds a separator shows in the counts, however the
	// separators are placed, and no row is given.
	for _, bad := range [][][]string{
		{{"a\x1fb", "c", "d", "e"}},
		{{"a", "b", "c", "d\x1e"}},
		{{"a\x1fb\x1fc\x1fd\x1ee", "f", "g", "h"}},
		{{"a", "b", "c", "d"}, {"\x1e", "\x1f", "", ""}},
	} {
		if err := unpackRows(pack(bad...), len(bad), make([][]byte, 4), func([][]byte) { t.Errorf("a row of %q", bad) }); !errors.Is(err, errUnpackable) {
			t.Errorf("unpackRows(%q): %v, want errUnpackable", bad, err)
		}
	}
	if err := unpackRows(pack(rows...), len(rows)+1, make([][]byte, 4), func([][]byte) {}); !errors.Is(err, errUnpackable) {
		t.Errorf("unpackRows of a row fewer than counted: %v, want errUnpackable", err)
	}
}

// TestDegreesPackedOrNot: the degrees of a user with more live
// relationships than one packed value holds, read in chunks, are those
// written (graphtest.CheckDegrees, which the conformance suite runs on
// ids that hold the separators, so that they are read row by row), and
// the packed read is the one that served them.
func TestDegreesPackedOrNot(t *testing.T) {
	defer func(n int) { packChunk = n }(packChunk)
	packChunk = 97
	for _, c := range []struct {
		infix string
		want  error
	}{{"", nil}, {"\x1e", errUnpackable}} {
		db := sqlitetest.Open(t)
		d := New(db)
		graphtest.CheckDegrees(t, graph.NewStore(d), c.infix)
		err := d.View(t.Context(), func(dtx graph.DriverTx) error {
			return dtx.(*tx).eachPackedChunk(t.Context(), liveEdgeEndCols, liveEdgeEndsFrom, liveEdgeEndOrder, []any{"alice"}, func([][]byte) {})
		})
		if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("ids with %q: packed read %v, want %v", c.infix, err, c.want)
		}
	}
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
		{"row by row", `SELECT ` + strings.Join(liveEdgeEndCols, ", ") + ` FROM ` + liveEdgeEndsFrom, []any{"usr_1"}},
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

// TestDegreesFallBackWhole: when a chunk after the first holds a value
// with a separator, the degrees counted from the chunks before are
// dropped and all of them are read row by row, not counted twice.
func TestDegreesFallBackWhole(t *testing.T) {
	defer func(n int) { packChunk = n }(packChunk)
	packChunk = 50
	s := graph.NewStore(New(sqlitetest.Open(t)))
	ctx := t.Context()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var es []graph.Entity
	for i := range 600 {
		es = append(es, graph.Entity{ID: fmt.Sprintf("ent_%03d", i), UserID: "u", Type: "thing", Snapshot: map[string]any{},
			Provenance: map[string]string{}, ObservationCount: 1, LastObservationAt: at, CreatedAt: at, ComputedAt: at})
	}
	// Sorted last, so that only the last chunk holds it.
	es = append(es, graph.Entity{ID: "ent_~\x1e", UserID: "u", Type: "thing", Snapshot: map[string]any{},
		Provenance: map[string]string{}, ObservationCount: 1, LastObservationAt: at, CreatedAt: at, ComputedAt: at})
	if err := s.Update(ctx, func(tx *graph.Tx) error {
		if err := tx.PutEntities(ctx, es); err != nil {
			return err
		}
		for i := range es {
			if _, _, err := tx.CreateRelationship(ctx, graph.NewRelationship{UserID: "u", Type: graph.RefersTo,
				SourceEntityID: es[i].ID, TargetEntityID: es[(i+1)%len(es)].ID, Now: at}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx *graph.Tx) error {
		stats, err := tx.ListEntityStats(ctx, graph.EntityFilter{UserID: "u", Page: graph.Page{Limit: 1000}})
		if err != nil {
			return err
		}
		for _, e := range stats {
			if len(e.Degrees) != 1 || e.Degrees[0].Count != 2 {
				t.Errorf("degrees of %q: %v, want 2 things", e.ID, e.Degrees)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
