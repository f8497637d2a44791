package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/embedded"
	graphpostgres "github.com/cairnkg/cairn/graph/postgres"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/vector"
	vembedded "github.com/cairnkg/cairn/vector/embedded"
	"github.com/cairnkg/cairn/vector/pgvector"
)

// backend is the storage a Cairn process runs on, chosen by configuration:
// the embedded store (one SQLite file in the data directory) by default, or
// PostgreSQL when a database URL is given. Everything that lives in
// PostgreSQL in production lives there then: the control plane and the
// graph (and, through postgres, what needs pgvector).
type backend struct {
	// control is the control plane's database and the dialect it speaks.
	control *sql.DB
	dialect migrations.Dialect
	// graph is the graph driver.
	graph graph.Driver
	// sqlite is the embedded store; nil on PostgreSQL.
	sqlite *sqlite.DB
	// postgres is the process's one PostgreSQL pool, with pgvector's types
	// registered; nil on the embedded store.
	postgres *postgres.DB
	// neo4j is the process's one Neo4j driver when the graph lives there;
	// nil otherwise.
	neo4j neo4j.DriverWithContext
	// describe names the backend for logs, without secrets.
	describe string
}

// openBackend opens (and migrates) the backend cfg selects.
func openBackend(ctx context.Context, cfg appConfig) (*backend, error) {
	if cfg.neo4j.enabled() {
		return openNeo4jBackend(ctx, cfg)
	}
	if cfg.databaseURL != "" {
		pg, err := postgres.Open(ctx, cfg.databaseURL, postgres.Options{AnalyzeEvery: postgres.DefaultAnalyzeEvery})
		if err != nil {
			return nil, err
		}
		return &backend{
			control: pg.SQL, dialect: migrations.Postgres,
			graph: graphpostgres.New(pg.Pool), postgres: pg,
			describe: "postgres " + serverName(pg),
		}, nil
	}
	db, err := sqlite.Open(ctx, cfg.dataDir)
	if err != nil {
		return nil, err
	}
	return &backend{
		control: db.Write, dialect: migrations.SQLite,
		graph: embedded.New(db), sqlite: db,
		describe: "embedded " + absPath(cfg.dataDir),
	}, nil
}

// serverName is user@host:port/database of the pool's server.
func serverName(pg *postgres.DB) string {
	c := pg.Pool.Config().ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// ping reports whether the backend's databases answer.
func (b *backend) ping(ctx context.Context) error {
	if b.neo4j != nil {
		if err := b.neo4j.VerifyConnectivity(ctx); err != nil {
			return fmt.Errorf("neo4j: %w", err)
		}
	}
	if b.postgres != nil {
		if err := b.postgres.Pool.Ping(ctx); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		return nil
	}
	if err := b.sqlite.Write.PingContext(ctx); err != nil {
		return fmt.Errorf("embedded store: %w", err)
	}
	return nil
}

// Close closes the databases; the graph driver is closed by its Store.
func (b *backend) Close() error {
	var errs []error
	if b.neo4j != nil {
		errs = append(errs, b.neo4j.Close(context.Background()))
	}
	if b.postgres != nil {
		errs = append(errs, b.postgres.Close())
	}
	if b.sqlite != nil {
		errs = append(errs, b.sqlite.Close())
	}
	return errors.Join(errs...)
}

// stdioServer is the MCP client configuration that launches `cairn stdio` on
// the stores cfg selects. A database URL may hold a password, so it is left
// for the person to fill in rather than printed.
func stdioServer(exe string, cfg appConfig) map[string]any {
	if cfg.databaseURL != "" {
		return map[string]any{
			"command": exe, "args": []string{"stdio"},
			"env": map[string]string{"CAIRN_DATABASE_URL": "<the database URL cairn serve uses>"},
		}
	}
	return map[string]any{"command": exe, "args": []string{"stdio", "--data-dir", absPath(cfg.dataDir)}}
}

// reader is the control plane's handle for reads that must not queue behind
// writers: the embedded store's read-only pool, or the one PostgreSQL pool.
func (b *backend) reader() *sql.DB {
	if b.sqlite != nil {
		return b.sqlite.Read
	}
	return b.control
}

// memoryDriver is what a memory driver must be here: it keeps memories and
// entity embeddings.
type memoryDriver interface {
	vector.Driver
	vector.EntityDriver
}

// memories is the memory driver: pgvector on PostgreSQL, the SQLite file
// otherwise.
func (b *backend) memories() memoryDriver {
	if b.postgres != nil {
		return pgvector.New(b.postgres.Vectors, pgvector.Options{})
	}
	return vembedded.New(b.sqlite)
}
