// Package postgres opens Cairn's PostgreSQL backend: one pgx pool per
// process, with pgvector's types registered on every connection, on a
// database migrated to the newest schema.
//
// Open checks the server in the order a person setting it up would want to
// hear about problems: can it be reached, are the credentials right, does it
// have the vector extension; each failure is an error that says what to do.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/cairnkg/cairn/migrations"
)

// DB is an open, migrated PostgreSQL backend.
//
// It holds three pools on the same database, one per layer that can be
// asked for a connection while another of its callers holds one: the
// graph's, whose transactions read the control plane (the schema
// registry) and the stored entity embeddings before they end; the
// vectors'; and the control plane's. A call that holds a connection of
// one pool only ever waits for another pool's, graph before vectors and
// control plane, never the reverse, so no number of calls at once can
// hold every connection of a pool while waiting for one of it. With one
// pool, four calls at once did (sixteen clients of cairn serve timed out
// after 30 s; TestLayersDoNotStarveEachOther). Every connection knows
// pgvector's types.
type DB struct {
	// Pool is the graph's pool, and that of anything not named below.
	Pool *pgxpool.Pool
	// Vectors is the pool of memories and embeddings (vector/pgvector).
	Vectors *pgxpool.Pool
	// Control is the control plane's pool, under SQL.
	Control *pgxpool.Pool
	// SQL is a database/sql handle over Control, for code written once for
	// SQLite and PostgreSQL (the control plane, the migration runner).
	SQL *sql.DB

	analyzer *analyzer
}

// Errors Open returns, wrapped with what it tried; callers test with
// errors.Is.
var (
	ErrUnreachable     = errors.New("postgres: server unreachable")
	ErrAuth            = errors.New("postgres: authentication failed")
	ErrNoDatabase      = errors.New("postgres: database does not exist")
	ErrNoVector        = errors.New("postgres: the vector extension (pgvector) is not available")
	ErrBadURL          = errors.New("postgres: invalid database URL")
	ErrVectorPrivilege = errors.New("postgres: not allowed to create the vector extension")
)

// defaultConnectTimeout bounds each connection attempt when the URL sets no
// connect_timeout.
const defaultConnectTimeout = 10 * time.Second

// Options configure Open. The zero value opens, migrates and pools.
type Options struct {
	// SkipMigrations opens without applying pending migrations, for a
	// caller that migrates on its own terms (Migrate applies them without a
	// pool; Status reads them without changing anything).
	SkipMigrations bool
	// AnalyzeEvery, when positive, runs the analyzer (see analyze.go):
	// while the pool's statements change rows it looks this often for
	// tables that changed enough since their last ANALYZE and analyses
	// them, so that plans follow the tables as they grow. DefaultAnalyzeEvery suits a server;
	// tests that pin plans on tables without statistics leave it off.
	AnalyzeEvery time.Duration
}

// Open connects to url, makes sure the vector extension exists, applies
// pending migrations and returns the pool.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, where, err := parse(url)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, cfg, where); err != nil {
		return nil, err
	}
	if !opts.SkipMigrations {
		if _, err := apply(ctx, cfg, where); err != nil {
			return nil, err
		}
	}

	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	var a *analyzer
	if opts.AnalyzeEvery > 0 {
		a = newAnalyzer(cfg, opts.AnalyzeEvery)
	}
	var pools [3]*pgxpool.Pool
	for i := range pools {
		pool, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
		if err == nil {
			err = pool.Ping(ctx)
			pools[i] = pool
		}
		if err != nil {
			for _, p := range pools[:i+1] {
				if p != nil {
					p.Close()
				}
			}
			return nil, classify(err, where)
		}
	}
	if a != nil {
		a.start()
	}
	return &DB{Pool: pools[0], Vectors: pools[1], Control: pools[2], SQL: stdlib.OpenDBFromPool(pools[2]), analyzer: a}, nil
}

// Migrate makes sure the vector extension exists on the database at url,
// applies pending migrations and returns the ones it applied, without
// building a pool: it is `cairn migrate`. Processes that run it at the same
// moment serialise on the migration runner's advisory lock, so each
// migration is applied once.
func Migrate(ctx context.Context, url string) ([]migrations.Migration, error) {
	cfg, where, err := parse(url)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, cfg, where); err != nil {
		return nil, err
	}
	return apply(ctx, cfg, where)
}

// Status reports every migration and whether the database at url has it.
// It changes nothing: no extension is created and no migration applied
// (`cairn migrate --status`).
func Status(ctx context.Context, url string) ([]migrations.Status, error) {
	cfg, where, err := parse(url)
	if err != nil {
		return nil, err
	}
	// A plain connection first, for a classified error.
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, classify(err, where)
	}
	conn.Close(context.WithoutCancel(ctx))
	db := stdlib.OpenDB(*cfg.ConnConfig.Copy())
	defer db.Close()
	status, err := migrations.List(ctx, db, migrations.Postgres)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w", where, err)
	}
	return status, nil
}

// parse parses url and names the server it points at, for messages.
func parse(url string) (*pgxpool.Config, string, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBadURL, redact(err))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Without connect_timeout in the URL, a server that drops packets
		// would hold startup for the operating system's TCP timeout.
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	where := fmt.Sprintf("%s@%s:%d/%s", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	return cfg, where, nil
}

// prepare opens one plain connection: it tells reachability and
// credentials apart, and creates the vector extension before any
// connection registers its types.
func prepare(ctx context.Context, cfg *pgxpool.Config, where string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return classify(err, where)
	}
	err = ensureVector(ctx, conn, where)
	conn.Close(context.WithoutCancel(ctx))
	return err
}

// apply runs the migration runner over a connection of its own.
func apply(ctx context.Context, cfg *pgxpool.Config, where string) ([]migrations.Migration, error) {
	mdb := stdlib.OpenDB(*cfg.ConnConfig.Copy())
	defer mdb.Close()
	applied, err := migrations.Apply(ctx, mdb, migrations.Postgres)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w", where, err)
	}
	return applied, nil
}

// Close closes the pool.
func (db *DB) Close() error {
	if db.analyzer != nil {
		db.analyzer.stop()
	}
	err := db.SQL.Close()
	db.Control.Close()
	db.Vectors.Close()
	db.Pool.Close()
	if err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}

// ensureVector creates the vector extension unless it exists.
func ensureVector(ctx context.Context, conn *pgx.Conn, where string) error {
	var installed bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&installed); err != nil {
		return classify(err, where)
	}
	if installed {
		return nil
	}
	_, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		// Another process created it at the same moment.
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "42501":
		return fmt.Errorf("%w on %s: %s; run CREATE EXTENSION vector as a superuser once, or connect as one", ErrVectorPrivilege, where, pgErr.Message)
	case errors.As(err, &pgErr) && (pgErr.Code == "58P01" || pgErr.Code == "0A000" || pgErr.Code == "42704"):
		return fmt.Errorf("%w on %s (%s). Install pgvector 0.8 or newer on the server: on Debian or Ubuntu, "+
			"apt install postgresql-<major>-pgvector (or run scripts/provision-postgres.sh, which builds it from source); "+
			"elsewhere see https://github.com/pgvector/pgvector#installation", ErrNoVector, where, pgErr.Message)
	default:
		return classify(err, where)
	}
}

// classify turns a connection error into one of the package's errors, with
// the server named and the password never shown.
func classify(err error, where string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return fmt.Errorf("%w for %s: %s; check the user and password in the database URL", ErrAuth, where, pgErr.Message)
		case "3D000":
			return fmt.Errorf("%w: %s: %s; create it (createdb) or fix the URL", ErrNoDatabase, where, pgErr.Message)
		}
		return fmt.Errorf("postgres %s: %s (SQLSTATE %s)", where, pgErr.Message, pgErr.Code)
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connErr) {
		// The network error alone says what happened; pgx's message repeats
		// it for every address and TLS mode it tried.
		cause := redact(err)
		if netErr != nil {
			cause = netErr.Error()
		}
		return fmt.Errorf("%w: cannot connect to %s: %s; is PostgreSQL running and is the address right?", ErrUnreachable, where, cause)
	}
	return fmt.Errorf("postgres %s: %w", where, err)
}

// redact returns err's message; pgx already leaves passwords out of the
// errors it returns, and this is the one place to change should that ever
// not hold.
func redact(err error) string { return err.Error() }
