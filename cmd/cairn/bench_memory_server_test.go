package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchMemoryServerSmoke runs scripts/bench-memory-server.sh, the
// side-by-side benchmark against the reference MCP memory server, on a tiny
// load so that it cannot rot: both servers must answer every call with the
// expected entities and the script must print its table. It checks that
// figures exist, never how fast either side is.
func TestBenchMemoryServerSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two MCP servers")
	}
	dir := nodeClientDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "package.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the reference memory server is not installed; scripts/provision-node.sh installs it")
		}
		t.Skip("the reference memory server is not installed; run scripts/provision-node.sh (scripts/test does)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}

	out := filepath.Join(t.TempDir(), "bench.json")
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "..", "scripts", "bench-memory-server.sh"),
		"--cairn", cairnBinary(t), "--no-install", "--entities", "50", "--relationships", "60",
		"--rounds", "1", "--samples", "3", "--json", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench-memory-server.sh: %v\n%s", err, stderr.String())
	}

	var report struct {
		Entities      int `json:"entities"`
		Relationships int `json:"relationships"`
		Figures       []struct {
			Measure   string  `json:"measure"`
			Cairn     float64 `json:"cairn"`
			Reference float64 `json:"reference"`
			Advantage float64 `json:"advantage"`
		} `json:"figures"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("report %s: %v", data, err)
	}
	if report.Entities != 50 || report.Relationships != 60 {
		t.Errorf("report of %d entities and %d relationships, want 50 and 60", report.Entities, report.Relationships)
	}
	for _, want := range []string{"bulk store", "relationships/s", "keyword lookup", "open one entity by id", "open one entity by name", "2-hop", "`tools/list` size", "`tools/list` time", "data on disk"} {
		found := false
		for _, f := range report.Figures {
			if strings.Contains(f.Measure, want) {
				found = true
				if !(f.Cairn > 0 && f.Reference > 0 && f.Advantage > 0) {
					t.Errorf("%s: Cairn %v, reference %v, advantage %v; want positive figures", f.Measure, f.Cairn, f.Reference, f.Advantage)
				}
			}
		}
		if !found {
			t.Errorf("no figure for %q in %s", want, data)
		}
	}
	if table := stdout.String(); !strings.Contains(table, "| measure (N = 50 entities, 60 relationships) | Cairn | reference | Cairn advantage |") {
		t.Errorf("the script did not print the Markdown table:\n%s", table)
	}
}
