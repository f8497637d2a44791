package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/migrations"

	graphneo4j "github.com/cairnkg/cairn/graph/neo4j"
)

// neo4jSettings are the flags that put the graph in Neo4j, as given.
type neo4jSettings struct {
	uri, user, password, passwordFile, database string
}

func (n *neo4jSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&n.uri, "neo4j-uri", "", "Neo4j 5 to keep the graph in, as bolt://host:7687 or neo4j://host:7687 (needs --database-url)")
	fs.StringVar(&n.user, "neo4j-user", "neo4j", "Neo4j user")
	fs.StringVar(&n.password, "neo4j-password", "", "Neo4j password; prefer the environment variable or --neo4j-password-file, which do not show it to ps")
	fs.StringVar(&n.passwordFile, "neo4j-password-file", "", "file holding the Neo4j password (a Docker or Kubernetes secret)")
	fs.StringVar(&n.database, "neo4j-database", graphneo4j.DefaultDatabase, "Neo4j database of the graph")
}

// neo4jEnv binds the Neo4j flags to their environment variables.
var neo4jEnv = []envVar{
	{"neo4j-uri", "CAIRN_NEO4J_URI"},
	{"neo4j-user", "CAIRN_NEO4J_USER"},
	{"neo4j-password", "CAIRN_NEO4J_PASSWORD"},
	{"neo4j-password-file", "CAIRN_NEO4J_PASSWORD_FILE"},
	{"neo4j-database", "CAIRN_NEO4J_DATABASE"},
}

// enabled reports whether the graph is to live in Neo4j.
func (n neo4jSettings) enabled() bool { return n.uri != "" }

// config checks the settings and returns the connection's configuration:
// the password from its flag or its file (not both), the database named.
// Neo4j holds the graph only; the control plane, memories and embeddings
// need PostgreSQL, so databaseURL must be set.
func (n neo4jSettings) config(databaseURL string) (graphneo4j.Config, error) {
	if databaseURL == "" {
		return graphneo4j.Config{}, errors.New("CAIRN_NEO4J_URI needs CAIRN_DATABASE_URL too: with the graph in Neo4j, users, keys, memories and embeddings live in PostgreSQL")
	}
	password := n.password
	if n.passwordFile != "" {
		if password != "" {
			return graphneo4j.Config{}, errors.New("give the Neo4j password once: CAIRN_NEO4J_PASSWORD or CAIRN_NEO4J_PASSWORD_FILE, not both")
		}
		b, err := os.ReadFile(n.passwordFile)
		if err != nil {
			return graphneo4j.Config{}, fmt.Errorf("CAIRN_NEO4J_PASSWORD_FILE: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	cfg := graphneo4j.Config{URI: n.uri, User: n.user, Password: password, Database: n.database}
	if err := cfg.Validate(); err != nil {
		return graphneo4j.Config{}, fmt.Errorf("CAIRN_NEO4J_*: %w", err)
	}
	return cfg, nil
}

// openNeo4jBackend opens the split deployment: the graph in Neo4j, and the
// control plane, memories and embeddings in PostgreSQL. Neo4j comes first,
// so that a wrong Neo4j setting is the one line the start fails with before
// PostgreSQL is touched. The graph's outbox lives with the graph, in Neo4j:
// a store writes its entries in the same Neo4j transaction as the change,
// and the entity-embedding worker claims them there and writes the vectors
// to pgvector, so a crash between the two stores is repaired: entries the
// dead process had not claimed, by the next worker at once; those it had
// claimed, once their lease (knowledge.EntityEmbedLease) ends.
func openNeo4jBackend(ctx context.Context, cfg appConfig) (*backend, error) {
	nc, err := cfg.neo4j.config(cfg.databaseURL)
	if err != nil {
		return nil, err
	}
	nd, err := graphneo4j.Connect(ctx, nc)
	if err != nil {
		return nil, err
	}
	if _, err := graphneo4j.Migrate(ctx, nd, nc.Database, graphneo4j.MigrateOptions{}); err != nil {
		_ = nd.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	pg, err := postgres.Open(ctx, cfg.databaseURL, postgres.Options{AnalyzeEvery: postgres.DefaultAnalyzeEvery})
	if err != nil {
		_ = nd.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return &backend{
		control: pg.SQL, dialect: migrations.Postgres,
		graph: graphneo4j.New(nd, nc.Database), postgres: pg, neo4j: nd,
		describe: fmt.Sprintf("postgres %s with the graph in neo4j %s/%s", serverName(pg), redactURI(nc.URI), nc.Database),
	}, nil
}

// redactURI is a Neo4j URI without user information, for logs.
func redactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparsable URI)"
	}
	u.User = nil
	return u.String()
}
