package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeo4jSettings(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "neo4j-password")
	if err := os.WriteFile(secret, []byte("from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const pg = "postgres://cairn@db:5432/cairn"
	tests := []struct {
		name        string
		n           neo4jSettings
		databaseURL string
		wantErr     string
		wantPass    string
	}{
		{name: "password", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j", password: "p", database: "neo4j"}, databaseURL: pg, wantPass: "p"},
		{name: "password file", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j", passwordFile: secret, database: "neo4j"}, databaseURL: pg, wantPass: "from-a-file"},
		{name: "no database URL", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j", password: "p"}, wantErr: "CAIRN_NEO4J_URI needs CAIRN_DATABASE_URL"},
		{name: "both passwords", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j", password: "p", passwordFile: secret}, databaseURL: pg, wantErr: "not both"},
		{name: "missing file", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j", passwordFile: secret + ".missing"}, databaseURL: pg, wantErr: "CAIRN_NEO4J_PASSWORD_FILE"},
		{name: "no password", n: neo4jSettings{uri: "bolt://neo4j:7687", user: "neo4j"}, databaseURL: pg, wantErr: "password is needed"},
		{name: "bad scheme", n: neo4jSettings{uri: "http://neo4j:7474", user: "neo4j", password: "p"}, databaseURL: pg, wantErr: "scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.n.config(tt.databaseURL)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("config() = %v, want an error saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("the error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Password != tt.wantPass || cfg.Database == "" {
				t.Errorf("config() = %+v", cfg)
			}
		})
	}
}

// TestNeo4jSelectedFailsClearly checks that the Neo4j settings reach the
// backend from the environment, and that selecting Neo4j fails with one
// line rather than running the graph on another backend.
func TestNeo4jSelectedFailsClearly(t *testing.T) {
	env := map[string]string{
		"CAIRN_NEO4J_URI":      "bolt://neo4j:7687",
		"CAIRN_NEO4J_PASSWORD": "p",
	}
	var common commonFlags
	cmd := &command{name: "test", env: storeEnv, setup: func(fs *flag.FlagSet) runFunc { common.registerStore(fs); return nil }}
	if _, err := parse(cmd, nil, &environment{getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
	cfg := common.appConfig()
	if cfg.neo4j.uri != "bolt://neo4j:7687" || cfg.neo4j.user != "neo4j" || cfg.neo4j.database != "neo4j" {
		t.Fatalf("settings from the environment: %+v", cfg.neo4j)
	}
	_, err := openBackend(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "CAIRN_DATABASE_URL") {
		t.Fatalf("without a database URL: %v", err)
	}
	cfg.databaseURL = "postgres://cairn@db.invalid:5432/cairn"
	_, err = openBackend(t.Context(), cfg)
	if !errors.Is(err, errNeo4jNotBuilt) || !strings.Contains(err.Error(), "the Neo4j graph driver is not built yet") {
		t.Fatalf("with a database URL: %v", err)
	}
}
