package sqlite

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// The statement cache. SQLite compiles every statement it runs into a
// program, and modernc.org/sqlite compiles a query given to
// QueryContext or ExecContext afresh each time and throws the program
// away after it ran. Cairn runs the same few hundred statements over and
// over (a consent check, an audit write, a snapshot read, the job
// worker's lease), so compiling was 8 to 9% of the CPU of the mcp
// package's tests, and a share of every call's latency. Each connection
// now keeps the programs of the statements it ran last, by their text,
// and runs them again with new arguments.
//
// A program is one per connection and runs one execution at a time: a
// query whose rows are still open holds it, and the same text asked for
// meanwhile (a nested read inside a transaction) compiles a program of
// its own for that once, as before. database/sql calls a connection from
// one goroutine at a time (rows are closed under the connection's lock),
// so the cache needs no lock of its own. SQLite recompiles a kept program
// by itself when the schema changed under it.

// Bounds of one connection's cache. Cairn's statements are written with
// parameters, so their texts are a fixed set, but multi-row statements
// (a batch's VALUES rows) have one text per row count and some are long:
// the least recently used fall out rather than the cache grow. SQLite's
// compiled program grows with its text, so the texts' length stands in for
// the memory the programs hold.
const (
	stmtCacheSize  = 256
	stmtCacheBytes = 1 << 20
)

// cachingConnector opens connections of drv that keep their compiled
// statements.
type cachingConnector struct {
	drv driver.Driver
	dsn string
}

// openCaching opens a handle on dsn whose connections keep their compiled
// statements.
func openCaching(dsn string) (*sql.DB, error) {
	drv, err := sqliteDriver()
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&cachingConnector{drv: drv, dsn: dsn}), nil
}

func (c *cachingConnector) Connect(context.Context) (driver.Conn, error) {
	return openCachingConn(c.drv, c.dsn)
}

func (c *cachingConnector) Driver() driver.Driver { return c.drv }

// sqliteDriver returns the driver modernc.org/sqlite registers as
// "sqlite", with whatever was registered on it.
func sqliteDriver() (driver.Driver, error) {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Driver(), nil
}

// openCachingConn opens a connection of drv on dsn that keeps its
// compiled statements.
func openCachingConn(drv driver.Driver, dsn string) (*cachingConn, error) {
	conn, err := drv.Open(dsn)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite: the driver's connection %T lacks a method the statement cache needs", conn)
	}
	return &cachingConn{sqliteConn: sc, byText: make(map[string]*list.Element)}, nil
}

// cachingConn is a connection that keeps the compiled statements of the
// queries it ran, most recently used first.
type cachingConn struct {
	sqliteConn
	byText map[string]*list.Element // of *cachedStmt, in lru
	lru    list.List
	bytes  int // of the texts in lru
}

// cachedStmt is one compiled statement of a cachingConn.
type cachedStmt struct {
	text string
	stmt sqliteStmt
	busy bool // running, or its rows are open
}

var _ sqliteConn = (*cachingConn)(nil)

// take returns the connection's compiled statement of text, compiling and
// keeping it if it has none, marked busy; nil when the one it has is busy.
func (c *cachingConn) take(ctx context.Context, text string) (*cachedStmt, error) {
	if e, ok := c.byText[text]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			return nil, nil
		}
		c.lru.MoveToFront(e)
		cs.busy = true
		return cs, nil
	}
	if len(text) > stmtCacheBytes/16 {
		// A text this long is a bulk statement whose compiling is small
		// beside its run; keeping it would push out many others.
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	sst, ok := st.(sqliteStmt)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("sqlite: the driver's statement %T lacks a method the statement cache needs", st)
	}
	cs := &cachedStmt{text: text, stmt: sst, busy: true}
	c.byText[text] = c.lru.PushFront(cs)
	c.bytes += len(text)
	c.evict()
	return cs, nil
}

// evict closes the least recently used statements beyond the cache's
// bounds that are not busy.
func (c *cachingConn) evict() {
	for e := c.lru.Back(); e != nil && (c.lru.Len() > stmtCacheSize || c.bytes > stmtCacheBytes); {
		prev := e.Prev()
		if cs := e.Value.(*cachedStmt); !cs.busy {
			c.lru.Remove(e)
			delete(c.byText, cs.text)
			c.bytes -= len(cs.text)
			_ = cs.stmt.Close()
		}
		e = prev
	}
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	defer func() { cs.busy = false }()
	return cs.stmt.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		cs.busy = false
		return nil, err
	}
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// Close closes the kept statements, then the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*cachedStmt).stmt.Close())
	}
	c.lru.Init()
	clear(c.byText)
	c.bytes = 0
	errs = append(errs, c.sqliteConn.Close())
	return errors.Join(errs...)
}

// cachedRows are the rows of a kept statement, which they free for the
// next execution when they are closed.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	if r.cs == nil {
		return nil
	}
	defer func() { r.cs.busy, r.cs = false, nil }()
	return r.Rows.Close()
}
