package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// The write queue. SQLite lets one writer at a time hold a store's write
// lock; a writer that finds it held is handled by the busy handler
// (busy_timeout), which sleeps and tries again: 1 ms, 2, 5, 10, 15, 20, 25
// ms and so on. It is not a queue. A writer that commits and begins again
// at once (the entity-embedding worker, draining the outbox in quick
// transactions behind a bulk load) takes the lock back between the
// sleeps of the others, which sleep longer each time: a store of 100
// entities waited tens to hundreds of milliseconds for a lock that was
// free most of the time, and the bulk load of the side-by-side benchmark
// fell from 5,000 to 800 entities a second with the lexical embedder,
// whose worker writes most often.
//
// So the writers of one process queue in Go, first come first served, and
// wake as soon as the writer before them is done; the busy handler is left
// to arbitrate between processes (an admin command beside a server), as
// before. A connection of the Write handle takes its place in the queue
// when it begins a transaction and leaves it when the transaction ends,
// and a statement run outside a transaction queues for its own duration:
// an Exec until it returns, a query (INSERT … RETURNING, as the rate
// limiter counts a hit) until its rows are closed. Only a query that is a
// plain SELECT, a read that WAL lets run beside a writer, does not queue.

// writeQueue is the first-come-first-served queue of one store's writers:
// a channel of one slot, whose blocked senders Go wakes in order.
type writeQueue chan struct{}

// enter waits for the writer's turn, or for ctx to end.
func (q writeQueue) enter(ctx context.Context) error {
	select {
	case q <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sqlite: waiting for the write lock: %w", ctx.Err())
	}
}

func (q writeQueue) leave() { <-q }

// openWriter opens the Write handle of the store at dsn: connections whose
// writes wait their turn in q.
func openWriter(dsn string, q writeQueue) (*sql.DB, error) {
	drv, err := sqliteDriver()
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&queuedConnector{drv: drv, dsn: dsn, q: q}), nil
}

// queuedConnector opens connections of drv that queue in q, and keep their
// compiled statements (stmtcache.go).
type queuedConnector struct {
	drv driver.Driver
	dsn string
	q   writeQueue
}

func (c *queuedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := openCachingConn(c.drv, c.dsn)
	if err != nil {
		return nil, err
	}
	return &queuedConn{conn: conn, q: c.q}, nil
}

func (c *queuedConnector) Driver() driver.Driver { return c.drv }

// sqliteConn is what database/sql uses of a modernc.org/sqlite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// queuedConn is a connection whose transactions, and statements run
// outside one, wait their turn in q. database/sql uses a connection from
// one goroutine at a time, so tx needs no lock.
type queuedConn struct {
	conn sqliteConn
	q    writeQueue
	tx   *queuedTx // the open transaction, which holds the turn; nil when none
}

var (
	_ sqliteConn = (*queuedConn)(nil)
	_ driver.Tx  = (*queuedTx)(nil)
)

func (c *queuedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.tx != nil {
		return nil, errors.New("sqlite: a transaction is already open on this connection")
	}
	if err := c.q.enter(ctx); err != nil {
		return nil, err
	}
	tx, err := c.conn.BeginTx(ctx, opts)
	if err != nil {
		c.q.leave()
		return nil, err
	}
	c.tx = &queuedTx{tx: tx, c: c}
	return c.tx, nil
}

func (c *queuedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *queuedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	leave, err := c.turn(ctx, query, false)
	if err != nil {
		return nil, err
	}
	defer leave()
	return c.conn.ExecContext(ctx, query, args)
}

func (c *queuedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	leave, err := c.turn(ctx, query, true)
	if err != nil {
		return nil, err
	}
	rows, err := c.conn.QueryContext(ctx, query, args)
	return heldRows(rows, err, leave)
}

// turn waits for the connection's turn to run query outside a
// transaction, and returns what gives the turn on. Inside a transaction,
// which holds the turn already, and for a query that is a plain SELECT,
// there is nothing to wait for.
func (c *queuedConn) turn(ctx context.Context, query string, isQuery bool) (leave func(), err error) {
	if c.tx != nil || isQuery && isSelect(query) {
		return func() {}, nil
	}
	if err := c.q.enter(ctx); err != nil {
		return nil, err
	}
	return c.q.leave, nil
}

// isSelect reports whether query starts with SELECT: a read, which needs
// no turn. Anything else (a write, WITH, a PRAGMA) queues, which is always
// safe.
func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// heldRows returns rows that give the turn on when they are closed (or
// gives it on at once when the query failed).
func heldRows(rows driver.Rows, err error, leave func()) (driver.Rows, error) {
	if err != nil {
		leave()
		return nil, err
	}
	return &queuedRows{Rows: rows, leave: sync.OnceFunc(leave)}, nil
}

// PrepareContext returns a statement whose executions outside a
// transaction queue as ExecContext and QueryContext do.
func (c *queuedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	sst, ok := st.(sqliteStmt)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("sqlite: the driver's statement %T lacks a method the write queue needs", st)
	}
	return &queuedStmt{stmt: sst, c: c, query: query}, nil
}

func (c *queuedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *queuedConn) Ping(ctx context.Context) error         { return c.conn.Ping(ctx) }
func (c *queuedConn) ResetSession(ctx context.Context) error { return c.conn.ResetSession(ctx) }
func (c *queuedConn) IsValid() bool                          { return c.conn.IsValid() }

// Close closes the connection, giving on the turn of a transaction left
// open on it (SQLite rolls it back).
func (c *queuedConn) Close() error {
	err := c.conn.Close()
	if c.tx != nil {
		c.tx.end()
	}
	return err
}

// queuedTx leaves the queue when its transaction ends, whichever way.
type queuedTx struct {
	tx   driver.Tx
	c    *queuedConn
	once sync.Once
}

func (t *queuedTx) Commit() error {
	defer t.end()
	return t.tx.Commit()
}

func (t *queuedTx) Rollback() error {
	defer t.end()
	return t.tx.Rollback()
}

func (t *queuedTx) end() {
	t.once.Do(func() {
		t.c.tx = nil
		t.c.q.leave()
	})
}

// queuedRows give the turn on when they are closed.
type queuedRows struct {
	driver.Rows
	leave func()
}

func (r *queuedRows) Close() error {
	defer r.leave()
	return r.Rows.Close()
}

// sqliteStmt is what database/sql uses of a modernc.org/sqlite statement.
type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// queuedStmt is a prepared statement of a queuedConn.
type queuedStmt struct {
	stmt  sqliteStmt
	c     *queuedConn
	query string
}

func (s *queuedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	leave, err := s.c.turn(ctx, s.query, false)
	if err != nil {
		return nil, err
	}
	defer leave()
	return s.stmt.ExecContext(ctx, args)
}

func (s *queuedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	leave, err := s.c.turn(ctx, s.query, true)
	if err != nil {
		return nil, err
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	return heldRows(rows, err, leave)
}

func (s *queuedStmt) Close() error  { return s.stmt.Close() }
func (s *queuedStmt) NumInput() int { return s.stmt.NumInput() }

func (s *queuedStmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, errors.New("sqlite: Exec without a context is not supported")
}

func (s *queuedStmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, errors.New("sqlite: Query without a context is not supported")
}
