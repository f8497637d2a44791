package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// Most MCP hosts (Claude Desktop, Claude Code, Cursor, VS Code, mcp-remote)
// run the official TypeScript SDK client, which checks what the Go client
// lets pass: a tool schema it cannot use hides every tool. These tests drive
// the built binary with it, from testdata/node (scenario.mjs, its packages
// pinned by package-lock.json and installed by scripts/provision-node.sh).

// nodeClientDir returns the directory of the TypeScript client, or skips
// (fails under CI=true) when Node.js or its packages are missing.
func nodeClientDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing = "the MCP TypeScript SDK is not installed"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; scripts/provision-node.sh installs it", missing)
		}
		t.Skipf("%s; run scripts/provision-node.sh (scripts/test does)", missing)
	}
	return dir
}

// tsScenarioResult is what scenario.mjs reports.
type tsScenarioResult struct {
	Tools           []string `json:"tools"`
	Stored          int      `json:"stored"`
	ProvenanceValue any      `json:"provenance_value"`
	Related         []string `json:"related"`
	MemoryFound     bool     `json:"memory_found"`
	// Imported are the occurred_at save_memories answered for two turns,
	// ImportedInMarch those a March date range found.
	Imported        []string `json:"imported"`
	ImportedInMarch []string `json:"imported_in_march"`
	// MemoryErased is how many memories delete_memory erased (the scenario
	// fails if a search still finds it).
	MemoryErased int `json:"memory_erased"`
	// Retraction is what the scenario saw retracting the newer of two
	// stored titles: the title before and after, and whether each id
	// (the retracted observation, the entity recomputed, the observation
	// and source the snapshot and the provenance name) was the one it
	// should be.
	Retraction struct {
		TitleBefore                  any  `json:"title_before"`
		BeforeFromNewer              bool `json:"before_from_newer"`
		Retracted                    bool `json:"retracted"`
		Recomputed                   bool `json:"recomputed"`
		TitleAfter                   any  `json:"title_after"`
		SnapshotFromOlder            bool `json:"snapshot_from_older"`
		ProvenanceValue              any  `json:"provenance_value"`
		ProvenanceObservationIsOlder bool `json:"provenance_observation_is_older"`
		ProvenanceSourceIsOlder      bool `json:"provenance_source_is_older"`
	} `json:"retraction"`
	ContextEntities []string `json:"context_entities"`
	SchemaCreated   []string `json:"schema_created"`
	RecipeCuisine   any      `json:"recipe_cuisine"`
	RecipeFields    []string `json:"recipe_schema_fields"`
	// RecipeListed are the raw fields retrieve_entities showed.
	RecipeListed []string `json:"recipe_listed_fields"`
	// WorksAt are the entities a WORKS_AT traversal reached.
	WorksAt []string `json:"works_at"`
	// Prompts are the prompts listed; PromptAboutAcme says about_entity
	// for Acme held the company's facts; CompletedAda are the completions
	// of its argument for "Ada".
	Prompts         []string `json:"prompts"`
	PromptAboutAcme bool     `json:"prompt_about_acme"`
	CompletedAda    []string `json:"completed_ada"`
	// Resources are the resources listed; ResourceCompany is the
	// company's industry read from its resource.
	Resources       []string `json:"resources"`
	ResourceCompany any      `json:"resource_company"`
	// Updated is the URI of the notifications/resources/updated the
	// client got, subscribed to the company, after correcting it.
	Updated     string `json:"updated"`
	UnknownTool struct {
		Code      string `json:"code"`
		Available int    `json:"available"`
	} `json:"unknown_tool"`
}

// runTSScenario runs scenario.mjs with the given arguments and decodes its
// report; a failure of the scenario fails the test with its stderr.
func runTSScenario(t *testing.T, env []string, args ...string) tsScenarioResult {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "node", append([]string{"scenario.mjs"}, args...)...)
	cmd.Dir = nodeClientDir(t)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var res tsScenarioResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("TypeScript client report %q: %v", stdout.String(), err)
	}
	return res
}

// tsScenarioToolsets are the default toolsets, memory_import, whose
// save_memories the scenario imports a conversation with, and forget,
// whose retract it retracts an observation with; tsScenarioEnv asks the
// server for them.
var (
	tsScenarioToolsets = append(slices.Clone(mcp.DefaultToolsets), mcp.ToolsetMemoryImport, mcp.ToolsetForget)
	tsScenarioEnv      = "CAIRN_TOOLSETS=default," + string(mcp.ToolsetMemoryImport) + "," + string(mcp.ToolsetForget)
)

func checkTSScenario(t *testing.T, res tsScenarioResult) {
	t.Helper()
	srv, err := mcp.NewServer(mcp.Deps{}, mcp.Options{Toolsets: tsScenarioToolsets})
	if err != nil {
		t.Fatal(err)
	}
	all := srv.Tools() // the toolsets the scenario's server exposes
	if len(res.Tools) != len(all) {
		t.Errorf("the TypeScript client listed %d tools, want %d: %v", len(res.Tools), len(all), res.Tools)
	}
	for _, tool := range all {
		if !slices.Contains(res.Tools, tool.Name()) {
			t.Errorf("the TypeScript client does not list %s", tool.Name())
		}
	}
	if res.Stored != 2 || res.ProvenanceValue != "rockets" || len(res.Related) == 0 || !res.MemoryFound || len(res.ContextEntities) == 0 {
		t.Errorf("scenario report %+v", res)
	}
	if len(res.SchemaCreated) != 1 || res.SchemaCreated[0] != "recipe" || res.RecipeCuisine != "thai" ||
		!slices.Equal(res.RecipeFields, []string{"cuisine", "name", "servings"}) || !slices.Equal(res.RecipeListed, []string{"vegetarian"}) {
		t.Errorf("an undeclared recipe: schema_created %v with fields %v, cuisine read back %v, listed with raw fields %v; want [recipe] with cuisine, name and servings, thai, and vegetarian",
			res.SchemaCreated, res.RecipeFields, res.RecipeCuisine, res.RecipeListed)
	}
	if !slices.Equal(res.Imported, []string{"2025-03-01T19:00:00Z", "2025-06-14T08:30:00Z"}) ||
		!slices.Equal(res.ImportedInMarch, []string{"2025-03-01T19:00:00Z"}) {
		t.Errorf("save_memories answered occurred_at %v, a March date range found %v; want both times in UTC and the March turn",
			res.Imported, res.ImportedInMarch)
	}
	if res.MemoryErased != 1 {
		t.Errorf("delete_memory erased %d memories, want 1", res.MemoryErased)
	}
	if r := res.Retraction; r.TitleBefore != "Rear Admiral" || !r.BeforeFromNewer || !r.Retracted || !r.Recomputed ||
		r.TitleAfter != "Commodore" || !r.SnapshotFromOlder || r.ProvenanceValue != "Commodore" || !r.ProvenanceObservationIsOlder || !r.ProvenanceSourceIsOlder {
		t.Errorf("retracting the newer of two titles: %+v; want Rear Admiral from the newer observation, then Commodore with the snapshot's and "+
			"the provenance's observation and source the older", r)
	}
	if len(res.WorksAt) != 1 {
		t.Errorf("a WORKS_AT traversal reached %v, want the company", res.WorksAt)
	}
	if !slices.Contains(res.Prompts, mcp.PromptAboutEntity) || !slices.Contains(res.Prompts, mcp.PromptLoadContext) ||
		!res.PromptAboutAcme || !slices.Equal(res.CompletedAda, []string{"Ada Lovelace"}) {
		t.Errorf("prompts %v, about_entity for Acme held its facts: %v, completions of Ada %v; want Ada Lovelace",
			res.Prompts, res.PromptAboutAcme, res.CompletedAda)
	}
	if !slices.Contains(res.Resources, "cairn://entities/company") || res.ResourceCompany != "rockets" {
		t.Errorf("resources %v, the company read from neotoma://entity/… has industry %v; want the companies listed and rockets",
			res.Resources, res.ResourceCompany)
	}
	if !strings.HasPrefix(res.Updated, "cairn://entity/ent_") {
		t.Errorf("subscribed to the company and correcting it, the client was told %q; want its URI", res.Updated)
	}
	if res.UnknownTool.Code != mcp.CodeUnknownTool || res.UnknownTool.Available != len(all) {
		t.Errorf("unknown tool: %+v, want %s listing %d tools", res.UnknownTool, mcp.CodeUnknownTool, len(all))
	}
}

func TestEndToEndTypeScriptStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	nodeClientDir(t)
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		// On the embedded store as an MCP host on a laptop runs it, with
		// the default model (the others embed with use-lite; see TestMain).
		if strings.HasSuffix(t.Name(), "/Embedded") {
			env = append(env, defaultEmbedder)
		}
		checkTSScenario(t, runTSScenario(t, append(env, tsScenarioEnv), "stdio", cairnBinary(t), "stdio", "--data-dir", dataDir))
	})
}

func TestEndToEndTypeScriptHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	nodeClientDir(t)
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		url := startServe(t, dataDir, append(env, tsScenarioEnv)...)
		checkTSScenario(t, runTSScenario(t, nil, "http", url, testOwnerKey))
	})
}
