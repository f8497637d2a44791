package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden tool schemas under testdata/tools")

// TestToolMetadata checks that every tool is fully described: a unique valid
// name, a title, a description, annotations, object input and output
// schemas, a known toolset and a budget.
func TestToolMetadata(t *testing.T) {
	tools := mcp.AllTools(mcp.Deps{})
	seen := map[string]bool{}
	for _, tool := range tools {
		def := tool.Def()
		t.Run(def.Name, func(t *testing.T) {
			if seen[def.Name] {
				t.Errorf("duplicate tool name")
			}
			seen[def.Name] = true
			if def.Title == "" || len(def.Description) < 40 {
				t.Errorf("title %q / description %q: both are needed, and the description must say what the tool does", def.Title, def.Description)
			}
			if def.Annotations == nil || def.Annotations.DestructiveHint == nil || def.Annotations.OpenWorldHint == nil {
				t.Errorf("annotations incomplete: %+v", def.Annotations)
			}
			if def.InputSchema == nil || def.OutputSchema == nil {
				t.Errorf("input and output schemas are both required")
			}
			if !slices.Contains(mcp.AllToolsets, tool.Toolset) {
				t.Errorf("toolset %q is not one of %v", tool.Toolset, mcp.AllToolsets)
			}
			if tool.Budget <= 0 {
				t.Errorf("no response budget")
			}
		})
	}
}

// TestToolSchemasGolden pins every tool: its definition as tools/list sends
// it (what the model reads), and the full schemas the server validates
// arguments against and its results follow (see leanInput and
// compactOutput). A change to any of them must show up as a diff of
// testdata/tools; rewrite with -update.
func TestToolSchemasGolden(t *testing.T) {
	dir := filepath.Join("testdata", "tools")
	tools := mcp.AllTools(mcp.Deps{})
	want := map[string]bool{}
	for _, tool := range tools {
		name := tool.Def().Name + ".json"
		want[name] = true
		got, err := json.MarshalIndent(struct {
			Toolset   string            `json:"toolset"`
			Budget    int               `json:"budget_bytes"`
			Requires  []mcp.Requirement `json:"requires,omitempty"`
			RateClass string            `json:"rate_class"`
			OwnerOnly bool              `json:"owner_only,omitempty"`
			Def       any               `json:"definition"`
			Input     any               `json:"enforced_input_schema"`
			Output    any               `json:"full_output_schema"`
		}{string(tool.Toolset), tool.Budget, tool.Requires, string(tool.RateClass), tool.OwnerOnly, tool.Def(), tool.InputSchema(), tool.OutputSchema()}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		golden, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./mcp -run Golden -update to create it)", tool.Def().Name, err)
			continue
		}
		if !bytes.Equal(golden, got) {
			t.Errorf("%s: schema drifted from %s; if the change is intended, run go test ./mcp -run Golden -update and commit the diff\n--- got ---\n%s", tool.Def().Name, path, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] && !*update {
			t.Errorf("%s has no tool; delete it or run with -update", e.Name())
		} else if !want[e.Name()] {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// TestReadOnlyAndToolsets checks tool selection.
func TestReadOnlyAndToolsets(t *testing.T) {
	srv, err := mcp.NewServer(mcp.Deps{}, mcp.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range srv.Tools() {
		if !tool.ReadOnly() {
			t.Errorf("read-only server exposes %s", tool.Name())
		}
	}
	srv, err = mcp.NewServer(mcp.Deps{}, mcp.Options{Toolsets: []mcp.Toolset{mcp.ToolsetTimeline}})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Tools()) != 1 || srv.Tools()[0].Name() != "list_timeline_events" {
		t.Errorf("timeline toolset exposes %d tools", len(srv.Tools()))
	}
	if _, err := mcp.NewServer(mcp.Deps{}, mcp.Options{Toolsets: []mcp.Toolset{"nope"}}); err == nil {
		t.Error("an unknown toolset was accepted")
	}
}
