package embedded

import (
	"fmt"
	"testing"

	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
)

// TestStmtCacheBounded checks that the cache prepares texts only between
// transactions, keeps at most maxCachedStmts of them, evicting the least
// recently used, and that a closed cache prepares nothing more.
func TestStmtCacheBounded(t *testing.T) {
	db := sqlitetest.Open(t)
	c := newStmtCache(db.Read)
	text := func(i int) string { return fmt.Sprintf("SELECT %d", i) }

	if c.get(text(0)) != nil {
		t.Fatal("get of a text never prepared returned a statement")
	}
	c.preparePending(t.Context())
	if c.get(text(0)) == nil {
		t.Fatal("text that missed is not prepared after preparePending")
	}
	for i := 1; i <= maxCachedStmts+10; i++ {
		c.get(text(i))
		c.get(text(0)) // keep it the most recently used
		c.preparePending(t.Context())
	}
	if n := c.lru.Len(); n != maxCachedStmts || len(c.byText) != n {
		t.Fatalf("cache holds %d statements (%d by text), want %d", n, len(c.byText), maxCachedStmts)
	}
	if c.get(text(0)) == nil {
		t.Error("most recently used statement was evicted")
	}
	if c.get(text(1)) != nil {
		t.Error("least recently used statement was kept")
	}

	// A statement from the cache runs inside a transaction, and still does
	// once the cache has closed it.
	stmt := c.get(text(0))
	sqlTx, err := db.Read.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer sqlTx.Rollback()
	dtx := &tx{tx: sqlTx, cache: c}
	if err := c.close(); err != nil {
		t.Fatalf("close cache: %v", err)
	}
	var got int
	if err := sqlTx.StmtContext(t.Context(), stmt).QueryRowContext(t.Context()).Scan(&got); err != nil || got != 0 {
		t.Errorf("closed cached statement in a transaction: got %d, %v", got, err)
	}
	if err := dtx.queryRow(t.Context(), text(5)).Scan(&got); err != nil || got != 5 {
		t.Errorf("query after close: got %d, %v", got, err)
	}
	c.get(text(7))
	c.preparePending(t.Context())
	if c.lru.Len() != 0 {
		t.Errorf("closed cache prepared %d statements", c.lru.Len())
	}
}
