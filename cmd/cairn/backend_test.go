package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWelcomeStdioConfig checks the stdio configuration the first run
// prints: it launches cairn on the same stores, and never shows the
// database URL, which may hold a password.
func TestWelcomeStdioConfig(t *testing.T) {
	tests := []struct {
		name     string
		store    appConfig
		want     []string
		unwanted []string
	}{
		{"Embedded", appConfig{dataDir: "/srv/cairn-data"}, []string{`"--data-dir"`, `"/srv/cairn-data"`}, []string{"CAIRN_DATABASE_URL"}},
		{"Postgres", appConfig{dataDir: "/srv/cairn-data", databaseURL: "postgres://cairn:s3cret@db:5432/cairn"},
			[]string{`"CAIRN_DATABASE_URL"`}, []string{"s3cret", "--data-dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			printWelcome(&out, "cairn_sk_test", "http://127.0.0.1:7400/mcp", tt.store, false)
			stdio := out.String()[strings.Index(out.String(), "over stdio"):strings.Index(out.String(), "Cursor (or any")]
			var cfg map[string]any
			if err := json.Unmarshal([]byte(stdio[strings.Index(stdio, "{"):]), &cfg); err != nil {
				t.Fatalf("stdio configuration is not JSON: %v\n%s", err, stdio)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdio, w) {
					t.Errorf("stdio configuration lacks %s:\n%s", w, stdio)
				}
			}
			for _, u := range tt.unwanted {
				if strings.Contains(out.String(), u) {
					t.Errorf("welcome shows %s:\n%s", u, out.String())
				}
			}
		})
	}
}
