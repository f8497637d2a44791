package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// openCachedForTest opens a one-connection handle whose connection keeps
// its statements, and returns it with that connection, to look into.
func openCachedForTest(t *testing.T) (*sql.DB, func() *cachingConn) {
	t.Helper()
	db, err := openCaching(dsn(filepath.Join(t.TempDir(), FileName), false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	conn := func() *cachingConn {
		c, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var cc *cachingConn
		// Raw is how a test reaches the driver's connection; the product
		// never does.
		if err := c.Raw(func(dc any) error { cc = dc.(*cachingConn); return nil }); err != nil {
			t.Fatal(err)
		}
		return cc
	}
	return db, conn
}

func TestStatementCacheRunsAgainWithNewArguments(t *testing.T) {
	db, conn := openCachedForTest(t)
	ctx := t.Context()
	const insert = `INSERT INTO kv (k, v) VALUES ($1, $2)`
	for i := range 10 {
		if _, err := db.ExecContext(ctx, insert, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The same text, a query this time, with each argument: every answer is
	// its own, not the first one's.
	const get = `SELECT v FROM kv WHERE k = $1`
	for i := range 10 {
		var v string
		if err := db.QueryRowContext(ctx, get, i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("v", i); v != want {
			t.Fatalf("k=%d: %q, want %q", i, v, want)
		}
	}
	c := conn()
	if _, ok := c.byText[insert]; !ok {
		t.Error("the insert is not kept")
	}
	if _, ok := c.byText[get]; !ok {
		t.Error("the select is not kept")
	}
	// A constraint error is the statement's answer, and the statement
	// still runs after it.
	if _, err := db.ExecContext(ctx, insert, 1, "again"); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("duplicate key: %v, want a UNIQUE constraint error", err)
	}
	if _, err := db.ExecContext(ctx, insert, 100, "after"); err != nil {
		t.Fatalf("after an error: %v", err)
	}
	// A statement SQLite cannot compile fails as it did without the cache,
	// and is not kept.
	if _, err := db.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("unknown table: %v", err)
	}
	if _, ok := conn().byText[`INSERT INTO nowhere VALUES (1)`]; ok {
		t.Error("a statement that did not compile is kept")
	}
}

// A query whose rows are open holds its statement: the same text run
// inside the loop (a nested read in a transaction) gets a statement of its
// own, and both read what they should.
func TestStatementCacheNestedSameText(t *testing.T) {
	db, _ := openCachedForTest(t)
	ctx := t.Context()
	for i := range 5 {
		if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT k, v FROM kv WHERE k >= $1 ORDER BY k`
	rows, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var outer []string
	for rows.Next() {
		var k int
		var v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, v)
		inner, err := tx.QueryContext(ctx, q, k+1)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		if want := 4 - k; n != want {
			t.Fatalf("inner read after k=%d: %d rows, want %d", k, n, want)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(outer, ","); got != "v0,v1,v2,v3,v4" {
		t.Fatalf("outer read: %s", got)
	}
}

// A kept statement sees a schema changed after it was compiled (SQLite
// recompiles it), and the cache stays within its size however many
// different texts run.
func TestStatementCacheSchemaChangeAndBound(t *testing.T) {
	db, conn := openCachedForTest(t)
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	const all = `SELECT * FROM kv`
	cols := func() []string {
		rows, err := db.QueryContext(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := strings.Join(cols(), ","); got != "k,v" {
		t.Fatalf("columns %s", got)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE kv ADD COLUMN w TEXT`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cols(), ","); got != "k,v,w" {
		t.Fatalf("columns after ALTER TABLE: %s, want k,v,w", got)
	}
	for i := range stmtCacheSize + 50 {
		var n int
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d + $1`, i), 1).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != i+1 {
			t.Fatalf("SELECT %d + 1 = %d", i, n)
		}
	}
	c := conn()
	if n := c.lru.Len(); n != stmtCacheSize || len(c.byText) != n {
		t.Fatalf("cache holds %d statements (%d by text), want %d", n, len(c.byText), stmtCacheSize)
	}
}

// Long texts (bulk statements) are run but not kept, and the texts kept
// stay within the cache's bytes.
func TestStatementCacheBytes(t *testing.T) {
	db, conn := openCachedForTest(t)
	ctx := t.Context()
	pad := func(n int) string { return "/*" + strings.Repeat("x", n) + "*/" }
	long := `SELECT 1 ` + pad(stmtCacheBytes/16)
	var n int
	if err := db.QueryRowContext(ctx, long).Scan(&n); err != nil || n != 1 {
		t.Fatalf("long text: %d, %v", n, err)
	}
	if _, ok := conn().byText[long]; ok {
		t.Error("a text longer than a sixteenth of the cache is kept")
	}
	for i := range 40 {
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d `, i)+pad(stmtCacheBytes/20)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
	}
	c := conn()
	if c.bytes > stmtCacheBytes || c.lru.Len() >= 40 {
		t.Fatalf("cache holds %d statements of %d bytes, want at most %d bytes", c.lru.Len(), c.bytes, stmtCacheBytes)
	}
}
