package embedded

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/graph"
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

// TestPackedDegreesAgree: the degrees of a context load's listing are the
// same read packed at once, read packed in chunks, and counted in SQL for
// pages of entities (addDegrees' other path), on a graph whose ids hold
// spaces, digits, control characters and multi-byte letters, with self
// loops and ended relationships.
func TestPackedDegreesAgree(t *testing.T) {
	db := sqlitetest.Open(t)
	s := graph.NewStore(New(db))
	ctx := t.Context()
	const user = "usr_packed"
	rng := rand.New(rand.NewPCG(7, 11))
	types := []string{"person", "org", "project"}
	ids := make([]string, 700)
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Update(ctx, func(tx *graph.Tx) error {
		for i := range ids {
			ids[i] = fmt.Sprintf("ent_%d %s\x1e%d é世", i, strings.Repeat("9", i%4), i%7)
			e := graph.Entity{ID: ids[i], UserID: user, Type: types[i%len(types)], CanonicalName: "n", SchemaVersion: "1.0",
				Snapshot: map[string]any{}, Provenance: map[string]string{}, ObservationCount: 1,
				LastObservationAt: when.Add(time.Duration(i) * time.Second), CreatedAt: when, ComputedAt: when}
			if err := tx.PutEntity(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var live []string
	if err := s.Update(ctx, func(tx *graph.Tx) error {
		for k := range 2000 {
			src, dst := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
			if k%50 == 0 {
				dst = src
			}
			typ := []string{graph.RefersTo, graph.Settles}[k%2]
			rel, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{UserID: user, Type: typ,
				SourceEntityID: src, TargetEntityID: dst, Now: when.Add(time.Duration(k) * time.Millisecond)})
			if err != nil {
				return err
			}
			if created {
				live = append(live, rel.ID)
			}
		}
		for _, id := range live[:100] {
			if _, err := tx.EndRelationship(ctx, user, id, when.Add(time.Hour)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	degrees := func(f graph.EntityFilter) map[string]map[string]int {
		t.Helper()
		out := map[string]map[string]int{}
		if err := s.View(ctx, func(tx *graph.Tx) error {
			stats, err := tx.ListEntityStats(ctx, f)
			for _, e := range stats {
				m := map[string]int{}
				for _, d := range e.Degrees {
					m[d.Type] += d.Count
				}
				out[e.ID] = m
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := graph.EntityFilter{UserID: user, Page: graph.Page{Limit: 1000}}
	atOnce := degrees(all)
	if len(atOnce) != len(ids) {
		t.Fatalf("%d entities listed, want %d", len(atOnce), len(ids))
	}
	var edges int
	for _, m := range atOnce {
		for _, n := range m {
			edges += n
		}
	}
	// Each live relationship counts at both of its ends.
	if want := 2 * (len(live) - 100); edges != want {
		t.Errorf("%d relationship ends counted, want %d", edges, want)
	}
	byPage := map[string]map[string]int{}
	for off := 0; off < len(ids); off += 300 {
		maps.Copy(byPage, degrees(graph.EntityFilter{UserID: user, Page: graph.Page{Limit: 300, Offset: off}}))
	}
	defer func(n int) { packChunk = n }(packChunk)
	packChunk = 97
	inChunks := degrees(all)
	for id, want := range atOnce {
		if !maps.Equal(byPage[id], want) || !maps.Equal(inChunks[id], want) {
			t.Errorf("degrees of %q: %v at once, %v by page, %v in chunks", id, want, byPage[id], inChunks[id])
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
