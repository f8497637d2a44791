package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
)

// TestWriteTracer checks which statements count toward waking the
// analyzer: the rows they changed, however sent.
func TestWriteTracer(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		err  error
		kind string
		rows int64
	}{
		{tag: "INSERT 0 3", kind: "query", rows: 3},
		{tag: "UPDATE 1", kind: "batch", rows: 1},
		{tag: "DELETE 2", kind: "query", rows: 2},
		{tag: "COPY 100", kind: "copy", rows: 100},
		{tag: "INSERT 0 0", kind: "query"}, // ON CONFLICT DO NOTHING, nothing new
		{tag: "UPDATE 0", kind: "batch"},   // a poll that claimed nothing
		{tag: "SELECT 5", kind: "query"},
		{tag: "ANALYZE", kind: "query"},
		{tag: "INSERT 0 3", err: errors.New("rolled back"), kind: "query"},
	} {
		a := &analyzer{}
		w := writeTracer{a}
		tag := pgconn.NewCommandTag(tc.tag)
		switch tc.kind {
		case "query":
			w.TraceQueryEnd(t.Context(), nil, pgx.TraceQueryEndData{CommandTag: tag, Err: tc.err})
		case "batch":
			w.TraceBatchQuery(t.Context(), nil, pgx.TraceBatchQueryData{CommandTag: tag, Err: tc.err})
		case "copy":
			w.TraceCopyFromEnd(t.Context(), nil, pgx.TraceCopyFromEndData{CommandTag: tag, Err: tc.err})
		}
		if got := a.changed.Load(); got != tc.rows {
			t.Errorf("%s %q (err %v): %d rows counted, want %d", tc.kind, tc.tag, tc.err, got, tc.rows)
		}
	}
}

// TestAnalyzerSleepsThroughReads checks, on a real pool, that reads,
// writes that change nothing and a few single-row writes (what the
// background workers and the readiness probe do while the service is
// idle) do not make the analyzer ask the server anything, and that a write
// of many rows does.
func TestAnalyzerSleepsThroughReads(t *testing.T) {
	db, err := Open(t.Context(), pgtest.URL(t), Options{AnalyzeEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 20 {
		if _, err := db.Pool.Exec(t.Context(), `SELECT count(*) FROM entities`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool.Exec(t.Context(), `UPDATE cairn_write_probe SET probes = probes + 1 WHERE id = 2`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(t.Context(), `DELETE FROM entities WHERE id = 'none'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(t.Context(), `INSERT INTO cairn_write_probe (id, probes) VALUES (1, 1)
			ON CONFLICT (id) DO UPDATE SET probes = cairn_write_probe.probes + 1`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := db.analyzer.looks.Load(); n != 0 {
		t.Errorf("the analyzer looked %d times with 20 rows changed", n)
	}
	for _, q := range []string{`CREATE TABLE scratch (n int)`, `INSERT INTO scratch SELECT generate_series(1, 100)`} {
		if _, err := db.Pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.analyzer.looks.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the analyzer did not look within 5 s of a write")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
