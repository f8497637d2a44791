package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPInspectorCLI drives the built binary with the MCP Inspector's
// command-line client (npm @modelcontextprotocol/inspector-cli, pinned in
// testdata/node), as a person checking a server by hand would, over
// Streamable HTTP: it lists the resources, the resource templates and the
// prompts, and reads an entity resource (issue 38). An agent that may
// read companies but not people neither sees the people's collection nor
// reads the person's resource.
func TestMCPInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	cli := filepath.Join(nodeClientDir(t), "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	dir := t.TempDir()
	dd := []string{"--data-dir", dir}
	url := startServe(t, dir) // creates the owner; cairn admin works beside it
	cairnAdmin(t, nil, false, append([]string{"agent", "create", "scout"}, dd...)...)
	for _, rule := range [][]string{{"allow", "entities/company"}, {"deny", "entities/person"}} {
		cairnAdmin(t, nil, false, append([]string{"consent", rule[0], "--agent", "scout", "--resource", rule[1], "--action", "read"}, dd...)...)
	}
	scoutKey := lastLine(cairnAdmin(t, nil, false, append([]string{"key", "create", "--agent", "scout"}, dd...)...))
	owner := connectHTTP(t, url)
	stored := callTool(t, owner, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": "Ada Lovelace"},
		map[string]any{"entity_type": "company", "name": "Analytical Engines"},
	}})
	ada := stored["entities"].([]any)[0].(map[string]any)["entity_id"].(string)

	// inspect runs the Inspector's CLI with key and decodes what it prints.
	inspect := func(key string, wantFail bool, args ...string) map[string]any {
		t.Helper()
		// The CLI finds its own package.json relative to the working
		// directory (inspector-cli 1.0.3), so it runs from its build
		// directory.
		cmd := exec.Command("node", append([]string{"index.js", url, "--transport", "http", "--header", "Authorization: Bearer " + key}, args...)...)
		cmd.Dir = cli
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if wantFail {
			if err == nil {
				t.Errorf("inspector %v succeeded, want a failure:\n%s", args, stdout.String())
			}
			return map[string]any{"stderr": stderr.String() + stdout.String()}
		}
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, stderr.String(), stdout.String())
		}
		var out map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("inspector %v printed what is not JSON: %v\n%s", args, err, stdout.String())
		}
		return out
	}
	uris := func(list []any, key string) []string {
		var out []string
		for _, r := range list {
			out = append(out, r.(map[string]any)[key].(string))
		}
		return out
	}

	listed := uris(inspect(testOwnerKey, false, "--method", "resources/list")["resources"].([]any), "uri")
	for _, want := range []string{"cairn://entities/person", "cairn://entities/company", "cairn://sources"} {
		if !strings.Contains(strings.Join(listed, " "), want) {
			t.Errorf("resources/list = %v, want %s", listed, want)
		}
	}
	templates := uris(inspect(testOwnerKey, false, "--method", "resources/templates/list")["resourceTemplates"].([]any), "uriTemplate")
	if !strings.Contains(strings.Join(templates, " "), "cairn://entity/{entity_id}") {
		t.Errorf("resources/templates/list = %v, want the entity template", templates)
	}
	prompts := uris(inspect(testOwnerKey, false, "--method", "prompts/list")["prompts"].([]any), "name")
	for _, want := range []string{"load_context", "about_entity", "review_contradictions"} {
		if !strings.Contains(strings.Join(prompts, " "), want) {
			t.Errorf("prompts/list = %v, want %s", prompts, want)
		}
	}
	read := inspect(testOwnerKey, false, "--method", "resources/read", "--uri", "cairn://entity/"+ada)
	contents := read["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("resources/read = %v", read)
	}
	var snap map[string]any
	if err := json.Unmarshal([]byte(contents[0].(map[string]any)["text"].(string)), &snap); err != nil || snap["canonical_name"] != "Ada Lovelace" {
		t.Errorf("the entity resource read %v (%v), want Ada Lovelace's snapshot", contents[0], err)
	}

	// The agent denied people: their collection is not listed and the
	// person reads as not found, while a company is there.
	scoutListed := uris(inspect(scoutKey, false, "--method", "resources/list")["resources"].([]any), "uri")
	joined := strings.Join(scoutListed, " ")
	if strings.Contains(joined, "entities/person") || !strings.Contains(joined, "entities/company") {
		t.Errorf("the agent's resources/list = %v, want companies and no people", scoutListed)
	}
	denied := inspect(scoutKey, true, "--method", "resources/read", "--uri", "cairn://entity/"+ada)
	if s := denied["stderr"].(string); strings.Contains(s, "Ada") {
		t.Errorf("the agent's read of the person said %q, which names her", s)
	}
}
