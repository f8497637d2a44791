package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

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

// errNeo4jNotBuilt is what selecting Neo4j gives until the graph driver on
// Neo4j exists: a configuration that asks for Neo4j must never run on
// another backend without saying so.
var errNeo4jNotBuilt = errors.New("CAIRN_NEO4J_URI is set, but the Neo4j graph driver is not built yet: unset it to keep the graph in PostgreSQL (CAIRN_DATABASE_URL) or the embedded store")

// openNeo4jGraph checks the Neo4j settings of cfg, then refuses: the graph
// driver on Neo4j is not part of this build.
func openNeo4jGraph(cfg appConfig) error {
	if _, err := cfg.neo4j.config(cfg.databaseURL); err != nil {
		return err
	}
	return errNeo4jNotBuilt
}
