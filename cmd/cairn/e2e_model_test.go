package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/uselite"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDefaultEmbedderFindsByMeaning is the check of issue 14: with nothing
// configured, a real MCP client saves memories and finds one by a query
// that shares no word with it, and list_entity_types for "payment" lists
// transaction, invoice and receipt first. It needs the default model built
// in; it skips with one line without it, and fails under CI=true.
func TestDefaultEmbedderFindsByMeaning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireModels(t, defaultModel)
	cs := connectStdio(t, t.TempDir(), defaultEmbedder)
	saveNotes(t, cs)
	findsLasagna(t, cs)

	out := callTool(t, cs, "list_entity_types", map[string]any{"keyword": "payment"})
	types, _ := out["entity_types"].([]any)
	if len(types) < 3 {
		t.Fatalf("list_entity_types payment: %v", out)
	}
	var first3 []string
	for _, ty := range types[:3] {
		first3 = append(first3, ty.(map[string]any)["entity_type"].(string))
	}
	slices.Sort(first3)
	if !slices.Equal(first3, []string{"invoice", "receipt", "transaction"}) {
		var all []any
		for _, ty := range types {
			all = append(all, ty.(map[string]any)["entity_type"])
		}
		t.Errorf("list_entity_types payment lists %v first, want invoice, receipt and transaction (all: %v)", first3, all)
	}
}

// TestReembedUSELiteStoreIntoTheDefault takes a store whose memories are
// in the space of use-lite, the default before bge: with no provider
// named it keeps use-lite and still finds by meaning; `cairn reembed` with
// no provider flags moves it to the default model, reporting progress and
// what it moved; then it finds by meaning with the default. It needs both
// models built in; it skips with one line without them, and fails under
// CI=true.
func TestReembedUSELiteStoreIntoTheDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireModels(t, providerUSELite, defaultModel)
	dataDir := t.TempDir()
	cs := connectStdio(t, dataDir, "CAIRN_EMBED_PROVIDER="+providerUSELite)
	saveNotes(t, cs)
	cs.Close()
	cs = connectStdio(t, dataDir, defaultEmbedder)
	findsLasagna(t, cs)
	// The store is still in use-lite's space: a save would be refused
	// were it served with the default model.
	callTool(t, cs, "save_memory", map[string]any{"collection": "notes", "text": "The dentist moved the check-up to May"})
	cs.Close()

	cmd := exec.Command(cairnBinary(t), "reembed", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), defaultEmbedder)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn reembed: %v\n%s", err, out)
	}
	t.Logf("cairn reembed:\n%s", out)
	want := builtInModels[defaultModel].space
	for _, line := range []string{
		"5 memories re-embedded, " + uselite.Name + " (512 dimensions) → " + want,
		"reembed: ", // the progress line
		"texts embedded with " + want,
	} {
		if !strings.Contains(string(out), line) {
			t.Errorf("cairn reembed printed:\n%s\nwant a line with %q", out, line)
		}
	}
	cs = connectStdio(t, dataDir, defaultEmbedder)
	findsLasagna(t, cs)
}

// requireModels skips the test with one line when one of the built-in
// models providers name is not built into the binary; under CI=true it
// fails instead.
func requireModels(t *testing.T, providers ...string) {
	t.Helper()
	for _, p := range providers {
		if _, err := openModel(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s: %v; CI needs %s", p, err, builtInModels[p].script)
			}
			t.Skipf("%s is not built in; run %s", p, builtInModels[p].script)
		}
	}
}

// lasagna is the note of saveNotes that findsLasagna looks for by a query
// that shares no word with it.
const lasagna = "Had a vegetarian lasagna at Luigi's trattoria on Friday evening"

// saveNotes saves four memories in the collection notes.
func saveNotes(t *testing.T, cs *mcpsdk.ClientSession) {
	t.Helper()
	for _, text := range []string{
		lasagna,
		"The quarterly planning meeting moved to Thursday afternoon",
		"Renewed the passport at the town hall",
		"The printer on the third floor is out of toner",
	} {
		callTool(t, cs, "save_memory", map[string]any{"collection": "notes", "text": text})
	}
}

// findsLasagna checks that search_memory "italian dinner" finds the
// lasagna note of saveNotes first.
func findsLasagna(t *testing.T, cs *mcpsdk.ClientSession) {
	t.Helper()
	out := callTool(t, cs, "search_memory", map[string]any{"collection": "notes", "query": "italian dinner"})
	results, _ := out["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("search_memory italian dinner found nothing: %v", out)
	}
	if first := results[0].(map[string]any); first["text"] != lasagna {
		t.Errorf("search_memory italian dinner: first result %q, want %q (all: %v)", first["text"], lasagna, results)
	}
}
