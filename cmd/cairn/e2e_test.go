package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
)

// The end-to-end tests build the real binary and drive it with the official
// Go MCP SDK client, over stdio and over Streamable HTTP, the way a user's
// client would.

var buildOnce struct {
	sync.Once
	path string
	err  error
}

// TestMain removes the binary the end-to-end tests built.
func TestMain(m *testing.M) {
	// The binaries these tests run embed with use-lite unless a test asks
	// for the default model (defaultEmbedder) or another: the default,
	// bge, costs eight times the CPU a text, which over the hundreds of
	// processes of these tests took their CPU from about 200 s to 600 s,
	// for tests of other things than embedding. The tests of the default
	// model, and those whose figures depend on it (a serve's memory), ask
	// for it. A CAIRN_EMBED_PROVIDER set by whoever runs the tests wins.
	if _, set := os.LookupEnv("CAIRN_EMBED_PROVIDER"); !set {
		os.Setenv("CAIRN_EMBED_PROVIDER", providerUSELite)
	}
	code := m.Run()
	if buildOnce.path != "" {
		_ = os.RemoveAll(filepath.Dir(buildOnce.path))
	}
	os.Exit(code)
}

// defaultEmbedder is the environment entry that has a binary run by a
// test embed with the default model, as a user's does when no provider is
// named (TestMain names use-lite for the others).
const defaultEmbedder = "CAIRN_EMBED_PROVIDER="

// cairnBinary builds cmd/cairn once per test process.
func cairnBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-e2e-bin")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "cairn")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, ".").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.path
}

const testOwnerKey = "e2e-owner-key-0123456789abcdef0123456789"

// startServe runs `cairn serve` on a free port and returns the MCP URL.
func startServe(t *testing.T, dataDir string, extraEnv ...string) string {
	t.Helper()
	url, _ := startServeProcess(t, dataDir, extraEnv...)
	return url
}

// startServeProcess is startServe that also returns kill, which ends the
// process with SIGKILL (no shutdown, no flush: a crash) and waits for it
// to exit. Without kill, the test's end interrupts the process.
func startServeProcess(t *testing.T, dataDir string, extraEnv ...string) (url string, kill func()) {
	t.Helper()
	url, cmd, wait := startServeCmd(t, dataDir, extraEnv...)
	return url, func() {
		_ = cmd.Process.Kill()
		_ = wait()
	}
}

// startServeCmd is startServe that also returns the process and wait,
// which waits for it to exit (once; later calls return the same).
func startServeCmd(t *testing.T, dataDir string, extraEnv ...string) (url string, cmd *exec.Cmd, wait func() error) {
	t.Helper()
	cmd = exec.Command(cairnBinary(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), append([]string{"CAIRN_OWNER_KEY=" + testOwnerKey}, extraEnv...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wait = sync.OnceValue(cmd.Wait)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	urlRe := regexp.MustCompile(`mcp=(http://\S+/mcp)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			if testing.Verbose() {
				t.Log("serve:", sc.Text())
			}
		}
	}()
	select {
	case u := <-found:
		return u, cmd, wait
	case <-time.After(30 * time.Second):
		t.Fatal("cairn serve did not report its URL within 30s")
		return "", nil, nil
	}
}

// keyTransport authenticates every request with the owner key.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url string) *mcpsdk.ClientSession {
	t.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: keyTransport{testOwnerKey}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func connectStdio(t *testing.T, dataDir string, extraEnv ...string) *mcpsdk.ClientSession {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), "stdio", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stderr = io.Discard
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "cairn-e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and decodes its structured result; a tool error
// fails the test.
func callTool(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, res.Content[0].(*mcpsdk.TextContent).Text)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content: %v", name, err)
	}
	return out
}

// callToolError calls a tool that must fail and returns its envelope.
func callToolError(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s succeeded, want an error: %+v", name, res.StructuredContent)
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &env); err != nil {
		t.Fatalf("%s: error is not the envelope: %v", name, err)
	}
	return env.Error
}

// truthModelScenario is what a user does first: list the tools, store a
// company from two sources that disagree, and trace the winning value.
func truthModelScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("tool %s lacks a schema or annotations", tool.Name)
		}
	}
	for _, want := range []string{"store", "list_entity_types", "retrieve_entity_snapshot", "retrieve_entities",
		"retrieve_entity_by_identifier", "list_observations", "retrieve_field_provenance", "correct", "merge_entities", "list_timeline_events"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (got %v)", want, names)
		}
	}

	first := map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme", "industry": "anvils"}}}
	s1 := callTool(t, cs, "store", first)
	time.Sleep(50 * time.Millisecond)
	between := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(50 * time.Millisecond)
	s2 := callTool(t, cs, "store", map[string]any{
		"entities":        []any{map[string]any{"entity_type": "company", "name": "ACME", "industry": "rockets", "ceo_nickname": "Wile"}},
		"source_priority": 100,
	})
	if s2["unknown_fields_count"] != float64(1) {
		t.Errorf("unknown_fields_count = %v, want 1", s2["unknown_fields_count"])
	}
	ent1 := s1["entities"].([]any)[0].(map[string]any)
	ent2 := s2["entities"].([]any)[0].(map[string]any)
	if ent1["entity_id"] != ent2["entity_id"] {
		t.Fatalf("the two stores made two entities: %v and %v", ent1["entity_id"], ent2["entity_id"])
	}
	id := ent1["entity_id"].(string)

	snap := callTool(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id})
	if got := snap["snapshot"].(map[string]any)["industry"]; got != "rockets" {
		t.Errorf("industry = %v, want rockets (the later source)", got)
	}
	if got := snap["provenance"].(map[string]any)["industry"]; got != ent2["observation_id"] {
		t.Errorf("provenance of industry = %v, want the winning observation %v", got, ent2["observation_id"])
	}
	fp := callTool(t, cs, "retrieve_field_provenance", map[string]any{"entity_id": id, "field": "industry"})
	if fp["source_material"].(map[string]any)["id"] != s2["source_id"] {
		t.Errorf("field provenance names source %v, want %v", fp["source_material"], s2["source_id"])
	}
	old := callTool(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": id, "at": between})
	if got := old["snapshot"].(map[string]any)["industry"]; got != "anvils" {
		t.Errorf("industry at %s = %v, want anvils (the first value)", between, got)
	}

	again := callTool(t, cs, "store", first)
	if again["source_id"] != s1["source_id"] || again["deduplicated"] != true {
		t.Errorf("storing the same arguments again: source %v deduplicated %v, want %v and true", again["source_id"], again["deduplicated"], s1["source_id"])
	}
	obs := callTool(t, cs, "list_observations", map[string]any{"entity_id": id})
	if obs["total"] != float64(2) {
		t.Errorf("observations = %v, want 2 (the repeated store adds none)", obs["total"])
	}

	e := callToolError(t, cs, "retrieve_entity_snapshot", map[string]any{"entity_id": "ent_missing"})
	if e["code"] != "ENTITY_NOT_FOUND" || e["trace_id"] == "" {
		t.Errorf("unknown entity: %v, want ENTITY_NOT_FOUND with a trace id", e)
	}
	e = callToolError(t, cs, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "invoice", "invoice_number": "1", "amount": "a lot"}}})
	if e["code"] != "VALIDATION_ERROR" || e["details"].(map[string]any)["field"] != "entities[0].amount" {
		t.Errorf("bad amount: %v, want VALIDATION_ERROR on entities[0].amount", e)
	}
}

// relationshipScenario builds the chain A PART_OF B PART_OF C, is refused
// C PART_OF A, and reads C's two-hop neighbourhood.
func relationshipScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	ids := map[string]string{}
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		out := callTool(t, cs, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": name}}})
		ids[name] = out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
	}
	a, b, c := ids["Alpha"], ids["Beta"], ids["Gamma"]
	rel := callTool(t, cs, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": a, "target_entity_id": b})
	if rel["created"] != true || !strings.HasPrefix(rel["id"].(string), "rel_") {
		t.Errorf("A PART_OF B = %v", rel)
	}
	callTool(t, cs, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": b, "target_entity_id": c})
	e := callToolError(t, cs, "create_relationship", map[string]any{"relationship_type": "PART_OF", "source_entity_id": c, "target_entity_id": a})
	if e["code"] != "CYCLE_DETECTED" {
		t.Fatalf("C PART_OF A: %v, want CYCLE_DETECTED", e)
	}
	path, _ := e["details"].(map[string]any)["path"].([]any)
	if fmt.Sprint(path) != fmt.Sprint([]any{c, a, b, c}) {
		t.Errorf("cycle path = %v, want [C A B C] = %v", path, []string{c, a, b, c})
	}
	related := callTool(t, cs, "retrieve_related_entities", map[string]any{"entity_id": c, "max_hops": 2})
	hops := map[string]float64{}
	for _, x := range related["entities"].([]any) {
		m := x.(map[string]any)
		hops[m["id"].(string)] = m["hops"].(float64)
	}
	if hops[b] != 1 || hops[a] != 2 || len(hops) != 2 || related["hops_traversed"] != float64(2) {
		t.Errorf("C's 2-hop neighbourhood = %v, want B at 1 hop and A at 2", related)
	}
	hood := callTool(t, cs, "retrieve_graph_neighborhood", map[string]any{"node_id": c})
	if rels, _ := hood["relationships"].([]any); len(rels) != 1 {
		t.Errorf("C's direct neighbourhood has %d relationships, want 1 (B PART_OF C)", len(rels))
	}
	e = callToolError(t, cs, "retrieve_related_entities", map[string]any{"entity_id": c, "max_hops": 6})
	if e["code"] != "VALIDATION_ERROR" {
		t.Errorf("max_hops 6: %v, want VALIDATION_ERROR", e)
	}
}

// e2eBackend is a store the end-to-end tests run the binary on.
type e2eBackend struct {
	name string
	// env returns the environment that selects a store of t's own: on a
	// server, with every migration applied, or, when empty is set, with
	// none (for the tests of migrating).
	env func(t *testing.T, empty bool) []string
	// usesDataDir says whether the store lives in --data-dir.
	usesDataDir bool
}

// e2eBackends are the embedded default, PostgreSQL, and the split
// deployment (the graph in Neo4j, the rest in PostgreSQL); the latter two
// skip, with pgtest's or neo4jtest's line, where no test server is
// configured.
var e2eBackends = []e2eBackend{
	// An empty CAIRN_DATABASE_URL counts as unset, whatever the test's own
	// environment holds.
	{"Embedded", func(*testing.T, bool) []string { return []string{"CAIRN_DATABASE_URL="} }, true},
	{"Postgres", func(t *testing.T, empty bool) []string { return []string{"CAIRN_DATABASE_URL=" + pgURL(t, empty)} }, false},
	{"Neo4j", splitEnvOf, false},
}

// pgURL returns a database of t's own (pgtest.URL), or an empty schema.
func pgURL(t *testing.T, empty bool) string {
	if empty {
		return pgtest.EmptyURL(t)
	}
	return pgtest.URL(t)
}

// splitEnv selects the split deployment: a Neo4j server held by t alone
// for the graph, and a PostgreSQL database of t's own for everything else.
func splitEnv(t *testing.T) []string { return splitEnvOf(t, false) }

// splitEnvOf is splitEnv, with an empty PostgreSQL schema when empty is set.
func splitEnvOf(t *testing.T, empty bool) []string {
	t.Helper()
	neo4jtest.SkipUnlessConfigured(t)
	env := []string{"CAIRN_DATABASE_URL=" + pgURL(t, empty)}
	return append(env, neo4jtest.Take(t).Env()...)
}

// forEachBackend runs fn once per backend, with a data directory that does
// not exist yet and the environment that selects the backend, then checks
// that only the embedded store wrote to the data directory. The backends
// run at the same time: each is its own cairn process on its own store
// (a schema, a Neo4j server held alone), and most of their time is spent
// waiting on those processes.
func forEachBackend(t *testing.T, fn func(t *testing.T, dataDir string, env []string)) {
	for _, b := range e2eBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			env := b.env(t, false)
			dataDir := filepath.Join(t.TempDir(), "data")
			fn(t, dataDir, env)
			if _, err := os.Stat(dataDir); !b.usesDataDir && err == nil {
				t.Errorf("%s wrote to the data directory %s", b.name, dataDir)
			}
		})
	}
}

func TestEndToEndStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		cs := connectStdio(t, dataDir, env...)
		truthModelScenario(t, cs)
		relationshipScenario(t, cs)
	})
}

func TestEndToEndHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		url := startServe(t, dataDir, env...)
		cs := connectHTTP(t, url)
		truthModelScenario(t, cs)
		relationshipScenario(t, cs)

		// Without a key the endpoint answers 401 with the envelope.
		resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env401 struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&env401)
		if resp.StatusCode != 401 || env401.Error.Code != "UNAUTHORIZED" {
			t.Errorf("no key: %d %s, want 401 UNAUTHORIZED", resp.StatusCode, env401.Error.Code)
		}

		ready, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		ready.Body.Close()
		if ready.StatusCode != http.StatusOK {
			t.Errorf("/readyz = %d, want 200", ready.StatusCode)
		}
	})
}

// TestCommandLine checks the command's own behaviour: help, unknown commands
// and flags, and bad configuration.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantOut  string
	}{
		{"help", []string{"help"}, nil, exitOK, "Commands:"},
		{"serve help", []string{"serve", "--help"}, nil, exitOK, "CAIRN_ADDR"},
		{"help of a command", []string{"help", "stdio"}, nil, exitOK, "stdin and stdout"},
		{"version", []string{"version"}, nil, exitOK, "cairn "},
		{"unknown command", []string{"frobnicate"}, nil, exitUsage, `unknown command "frobnicate"`},
		{"unknown flag", []string{"serve", "--nope"}, nil, exitUsage, "flag provided but not defined"},
		{"bad env value", []string{"serve"}, map[string]string{"CAIRN_MAX_REQUEST_BYTES": "lots"}, exitUsage, "CAIRN_MAX_REQUEST_BYTES"},
		{"bad read timeout", []string{"serve"}, map[string]string{"CAIRN_READ_TIMEOUT": "soon"}, exitUsage, "CAIRN_READ_TIMEOUT"},
		{"negative connection limit", []string{"serve", "--max-conns-per-client", "-1"}, nil, exitUsage, "--max-conns-per-client"},
		{"bad log level", []string{"serve", "--log-level", "loud"}, nil, exitUsage, "--log-level"},
		{"negative call timeout", []string{"stdio", "--call-timeout", "-1s", "--data-dir", t.TempDir()}, nil, exitUsage, "--call-timeout"},
		{"stdio help names the field bound", []string{"stdio", "--help"}, nil, exitOK, "CAIRN_MAX_FIELD_BYTES"},
		{"no field bound", []string{"stdio", "--max-field-bytes", "0"}, nil, exitUsage, "--max-field-bytes"},
		{"negative field bound", []string{"serve"}, map[string]string{"CAIRN_MAX_FIELD_BYTES": "-1"}, exitUsage, "--max-field-bytes"},
		{"short owner key", []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, map[string]string{"CAIRN_OWNER_KEY": "short"}, exitUsage, "CAIRN_OWNER_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			code := run(ctx, tt.args, &environment{
				stdin: strings.NewReader(""), stdout: &out, stderr: &out,
				getenv: func(k string) string { return tt.env[k] },
			})
			if code != tt.wantCode || !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, out.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}
