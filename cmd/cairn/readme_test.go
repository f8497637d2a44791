package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/mcp"
)

// specialEnv are variables read outside the flag machinery.
var specialEnv = []string{"CAIRN_OWNER_KEY", "CAIRN_EMBED_API_KEY", "CAIRN_LLM_API_KEY"}

// TestReadmeConfigurationTable keeps the README's configuration table and
// the commands' environment variables in step.
func TestReadmeConfigurationTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| [^|]* \\| `(CAIRN_[A-Z0-9_]+)` \\|").FindAllSubmatch(readme, -1)
	var documented []string
	for _, r := range rows {
		documented = append(documented, string(r[1]))
	}
	var used []string
	for _, c := range commands() {
		for _, ev := range c.env {
			if !slices.Contains(used, ev.env) {
				used = append(used, ev.env)
			}
		}
	}
	used = append(used, specialEnv...)
	for _, v := range used {
		if !slices.Contains(documented, v) {
			t.Errorf("%s is read but missing from the README's configuration table", v)
		}
	}
	for _, v := range documented {
		if !slices.Contains(used, v) {
			t.Errorf("the README documents %s, which nothing reads", v)
		}
	}
}

// TestReadmeAgentExample runs the README's agent example as written, on a
// fresh store with a profile, a person, an invoice and a memory, and checks
// that the agent it creates can do what the README says: load the user's
// context, search memories, read entities and the graph, and neither see
// invoices nor write.
func TestReadmeAgentExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeCommands(t, string(readme), "## Agents, keys and consent")

	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "data")
	a, err := openApp(ctx, appConfig{dataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := bootstrapOwner(ctx, a, func(k string) string {
		return map[string]string{"CAIRN_OWNER_KEY": testOwnerKey}[k]
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth, Ready: a.ready}))
	defer srv.Close()
	call := func(key, tool string, args map[string]any) (bool, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(args)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp/call/"+tool, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Success bool           `json:"success"`
			Result  map[string]any `json:"result"`
			Error   map[string]any `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if !out.Success {
			return false, out.Error
		}
		return true, out.Result
	}
	mustCall := func(key, tool string, args map[string]any) map[string]any {
		t.Helper()
		ok, res := call(key, tool, args)
		if !ok {
			t.Fatalf("%s: %v", tool, res)
		}
		return res
	}
	stored := mustCall(testOwnerKey, "store", map[string]any{"entities": []any{
		map[string]any{"entity_type": "person", "name": "Grace Hopper"},
		map[string]any{"entity_type": "invoice", "name": "INV-1", "invoice_number": "INV-1"},
	}})
	personID := stored["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	mustCall(testOwnerKey, "save_memory", map[string]any{"collection": "notes", "text": "Grace prefers morning meetings"})
	mustCall(testOwnerKey, "update_profile", map[string]any{"data": map[string]any{"name": "Ada"}, "reason": "test"})

	var key string
	for _, args := range commands {
		args = append(args[1:], "--data-dir", dir)
		var stdout, stderr strings.Builder
		code := run(ctx, args, &environment{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
			getenv: func(string) string { return "" }})
		if code != exitOK {
			t.Fatalf("cairn %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
		}
		if slices.Equal(args[:3], []string{"admin", "key", "create"}) {
			key = lastLine(stdout.String())
		}
	}
	if key == "" {
		t.Fatal("the README's example creates no key")
	}

	ctxOut := mustCall(key, "get_user_context", map[string]any{})
	if ctxOut["profile"].(map[string]any)["name"] != "Ada" {
		t.Errorf("get_user_context: profile %v, want the user's", ctxOut["profile"])
	}
	if recent := ctxOut["memories"].(map[string]any)["recent"].([]any); len(recent) != 1 {
		t.Errorf("get_user_context: %d recent memories, want 1", len(recent))
	}
	if s := fmt.Sprint(ctxOut["entities"]); !strings.Contains(s, "Grace Hopper") || strings.Contains(s, "INV-1") {
		t.Errorf("get_user_context: entities %s, want the person and not the invoice", s)
	}
	if res := mustCall(key, "search_memory", map[string]any{"collection": "notes", "query": "meetings"}); len(res["results"].([]any)) != 1 {
		t.Errorf("search_memory: %v, want the memory", res["results"])
	}
	if res := mustCall(key, "retrieve_entities", map[string]any{}); res["total"] != 1.0 {
		t.Errorf("retrieve_entities: %v, want the person alone", res["entities"])
	}
	mustCall(key, "retrieve_graph_neighborhood", map[string]any{"node_id": personID})
	if ok, res := call(key, "save_memory", map[string]any{"collection": "notes", "text": "written by the agent"}); ok || res["code"] != "CONSENT_DENIED" {
		t.Errorf("save_memory by the agent: success %v, %v; want CONSENT_DENIED", ok, res)
	}
}

// readmeCommands returns the cairn commands of the first sh block after
// heading, split into words as sh would split them (comments dropped,
// single quotes removed).
func readmeCommands(t *testing.T, readme, heading string) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", heading)
	}
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatalf("section %q has no sh block", heading)
	}
	block, _, _ = strings.Cut(block, "```")
	var commands [][]string
	for _, line := range strings.Split(block, "\n") {
		words := shellWords(line)
		if len(words) == 0 {
			continue
		}
		if words[0] != "cairn" {
			t.Fatalf("README line %q is not a cairn command", line)
		}
		commands = append(commands, words)
	}
	return commands
}

// shellWords splits a line of the README's sh blocks into words as sh
// would: blanks separate words, single quotes group, and a # that starts a
// word starts a comment.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
scan:
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case quoted || (r != ' ' && r != '\t' && !(r == '#' && !inWord)):
			word.WriteRune(r)
			inWord = true
		case r == '#':
			break scan
		case inWord:
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// TestReadmeToolsetTable keeps the README's table of toolsets, their tools
// and their share of tools/list in step with the tools.
func TestReadmeToolsetTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("| Toolset | Tools | Size in `tools/list` |\n| --- | --- | --- |\n")
	row := func(name string, opts mcp.Options, list bool) {
		srv, err := mcp.NewServer(mcp.Deps{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		tools := fmt.Sprintf("%d", len(srv.Tools()))
		if list {
			names := make([]string, len(srv.Tools()))
			for i, tool := range srv.Tools() {
				names[i] = "`" + tool.Name() + "`"
			}
			tools += ": " + strings.Join(names, ", ")
		}
		fmt.Fprintf(&want, "| %s | %s | %.1f KB |\n", name, tools, float64(mcp.DefinitionsBytes(srv.Tools()))/1000)
	}
	for _, ts := range mcp.AllToolsets {
		row("`"+string(ts)+"`", mcp.Options{Toolsets: []mcp.Toolset{ts}}, true)
	}
	var off []string
	for _, ts := range optionalToolsets() {
		off = append(off, "`"+string(ts)+"`")
	}
	row("the default (all but "+strings.Join(off[:len(off)-1], ", ")+" and "+off[len(off)-1]+")", mcp.Options{}, false)
	row("the default, `--read-only`", mcp.Options{ReadOnly: true}, false)
	row("`all`", mcp.Options{Toolsets: mcp.AllToolsets}, false)
	if !strings.Contains(string(readme), want.String()) {
		t.Errorf("the README's toolset table is out of date; it should read:\n\n%s", want.String())
	}
}
