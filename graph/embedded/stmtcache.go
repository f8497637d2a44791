package embedded

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"sync"
)

// Statement cache bounds, per pool. Multi-row statements (valueRows,
// placeholders) have one text per row count, so the texts are many and some
// are long; SQLite's compiled program grows with the text, so the text's
// length stands in for the memory a statement holds on each connection.
const (
	maxCachedStmts     = 128
	maxCachedStmtBytes = 1 << 20
)

// stmtCache keeps statements prepared on one pool, keyed by their SQL text,
// so that a transaction runs them with Tx.StmtContext instead of having
// SQLite parse the text again: database/sql keeps the statement prepared on
// each connection it has been used on, and Tx.StmtContext reuses it when the
// transaction runs on one of those (it prepares it there otherwise, once).
// Parsing was about half the CPU of a batch of relationship writes.
//
// A text is never prepared on the pool inside a transaction: that would
// take a second connection while the transaction holds one, and wait for it
// while every connection of the pool is held. A text that misses inside a
// transaction runs as before and is noted; the next transaction prepares
// the noted texts before it begins, holding no connection.
//
// The least recently used statements are closed past maxCachedStmts or
// maxCachedStmtBytes of text. Closing one that a transaction still uses is
// safe: database/sql finalises it once the transaction ends.
type stmtCache struct {
	db *sql.DB

	mu      sync.Mutex
	byText  map[string]*list.Element // of *cachedStmt
	lru     list.List                // front is the most recently used
	bytes   int
	pending map[string]struct{}
	closed  bool
}

type cachedStmt struct {
	text string
	stmt *sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, byText: map[string]*list.Element{}, pending: map[string]struct{}{}}
}

// get returns the statement prepared for text, or nil, noting text to be
// prepared before the next transaction.
func (c *stmtCache) get(text string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byText[text]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cachedStmt).stmt
	}
	if !c.closed && len(text) <= maxCachedStmtBytes && len(c.pending) < maxCachedStmts {
		c.pending[text] = struct{}{}
	}
	return nil
}

// preparePending prepares the texts that missed since the last call. It
// must be called outside any transaction on the pool. A text that fails to
// prepare is dropped: running it reports the error as it always did.
func (c *stmtCache) preparePending(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	texts := make([]string, 0, len(c.pending))
	for text := range c.pending {
		texts = append(texts, text)
	}
	clear(c.pending)
	c.mu.Unlock()

	for _, text := range texts {
		stmt, err := c.db.PrepareContext(ctx, text)
		if err != nil {
			continue
		}
		c.add(text, stmt)
	}
}

// add caches stmt under text, closing whatever it displaces.
func (c *stmtCache) add(text string, stmt *sql.Stmt) {
	var evicted []*sql.Stmt
	c.mu.Lock()
	switch _, dup := c.byText[text]; {
	case c.closed || dup:
		evicted = append(evicted, stmt)
	default:
		c.byText[text] = c.lru.PushFront(&cachedStmt{text: text, stmt: stmt})
		c.bytes += len(text)
		for c.lru.Len() > maxCachedStmts || c.bytes > maxCachedStmtBytes {
			evicted = append(evicted, c.removeLocked(c.lru.Back()))
		}
	}
	c.mu.Unlock()
	for _, s := range evicted {
		_ = s.Close()
	}
}

func (c *stmtCache) removeLocked(el *list.Element) *sql.Stmt {
	cs := c.lru.Remove(el).(*cachedStmt)
	delete(c.byText, cs.text)
	c.bytes -= len(cs.text)
	return cs.stmt
}

// close closes every cached statement; the cache stays empty afterwards.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	var stmts []*sql.Stmt
	for c.lru.Len() > 0 {
		stmts = append(stmts, c.removeLocked(c.lru.Back()))
	}
	clear(c.pending)
	c.mu.Unlock()
	var errs []error
	for _, s := range stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// stmt returns text prepared for this transaction, or nil when the cache
// does not have it yet. Each text is bound to the transaction once.
func (t *tx) stmt(ctx context.Context, text string) *sql.Stmt {
	if t.cache == nil {
		return nil
	}
	if s, ok := t.stmts[text]; ok {
		return s
	}
	parent := t.cache.get(text)
	if parent == nil {
		return nil
	}
	s := t.tx.StmtContext(ctx, parent)
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[text] = s
	return s
}

// exec runs a statement that returns no rows, prepared once per connection.
func (t *tx) exec(ctx context.Context, text string, args ...any) (sql.Result, error) {
	if s := t.stmt(ctx, text); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, text, args...)
}

// query runs a statement that returns rows, prepared once per connection.
// The caller must close the rows before it runs the same text again: a
// SQLite statement has one cursor.
func (t *tx) query(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(ctx, text); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, text, args...)
}

// queryRow is query for at most one row.
func (t *tx) queryRow(ctx context.Context, text string, args ...any) *sql.Row {
	if s := t.stmt(ctx, text); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, text, args...)
}
