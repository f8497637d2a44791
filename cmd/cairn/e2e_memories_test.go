package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Memory texts of the end-to-end scenarios. The query shares no word with
// the dentist memory: only an embedder that knows meaning can find it.
const (
	dentistText = "Dentist appointment on Tuesday at 3pm"
	trainText   = "Prefers aisle seats on long train rides"
	paraphrase  = "when do I see the tooth doctor"
)

// fakeEmbeddings is an OpenAI-compatible /embeddings endpoint with fixed
// vectors: the paraphrase lies close to the dentist memory, every other
// text far from both memories.
func fakeEmbeddings(t *testing.T, key string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	const dim = 8
	axis := func(i int, w float32) []float32 {
		v := make([]float32, dim)
		v[i] = w
		return v
	}
	fixed := map[string][]float32{
		dentistText: axis(0, 1),
		trainText:   axis(1, 1),
		paraphrase:  {0.9, 0, 0.43588989, 0, 0, 0, 0, 0}, // cosine 0.9 with the dentist memory
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error": {"message": "bad key"}}`))
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "fake-embed" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v, ok := fixed[text]
			if !ok {
				v = axis(7, 1)
			}
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// saveTwoCollections saves the two memories, in two collections.
func saveTwoCollections(t *testing.T, cs *mcpsdk.ClientSession) (dentistID string) {
	t.Helper()
	out := callTool(t, cs, "save_memory", map[string]any{
		"collection": "health", "text": dentistText, "metadata": map[string]any{"clinic": "downtown"}, "tags": []string{"appointment"},
	})
	dentistID, _ = out["id"].(string)
	if dentistID == "" {
		t.Fatalf("save_memory returned no id: %v", out)
	}
	callTool(t, cs, "save_memory", map[string]any{"collection": "travel", "text": trainText, "metadata": map[string]any{}})
	return dentistID
}

func searchIDs(t *testing.T, cs *mcpsdk.ClientSession, args map[string]any) ([]string, []map[string]any) {
	t.Helper()
	out := callTool(t, cs, "search_memory", args)
	results, _ := out["results"].([]any)
	var ids []string
	var hits []map[string]any
	for _, r := range results {
		h := r.(map[string]any)
		ids = append(ids, h["id"].(string))
		hits = append(hits, h)
	}
	return ids, hits
}

// TestEndToEndMemoriesLocal: with the local (lexical) embedder, named,
// since the default is the sentence model when the binary has it, a saved
// memory is found by its keywords, in its own collection only, on the
// embedded store and on PostgreSQL (pgvector).
func TestEndToEndMemoriesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		memoriesLocalScenario(t, connectStdio(t, dataDir, append(env, "CAIRN_EMBED_PROVIDER=local")...))
	})
}

func memoriesLocalScenario(t *testing.T, cs *mcpsdk.ClientSession) {
	t.Helper()
	dentist := saveTwoCollections(t, cs)

	ids, hits := searchIDs(t, cs, map[string]any{"collection": "health", "query": "dentist Tuesday"})
	if !slices.Equal(ids, []string{dentist}) {
		t.Fatalf("keyword search in health: %v, want the dentist memory", ids)
	}
	if m, _ := hits[0]["matched"].([]any); !slices.Contains(m, any("text")) {
		t.Errorf("matched = %v, want the text signal", hits[0]["matched"])
	}
	if hits[0]["metadata"].(map[string]any)["clinic"] != "downtown" {
		t.Errorf("metadata not returned: %v", hits[0])
	}
	if ids, _ := searchIDs(t, cs, map[string]any{"collection": "travel", "query": "dentist Tuesday"}); len(ids) != 0 {
		t.Errorf("the travel collection returned %v for the dentist's words", ids)
	}
	// The local embedder knows words, not meaning.
	if ids, _ := searchIDs(t, cs, map[string]any{"collection": "health", "query": paraphrase}); len(ids) != 0 {
		t.Errorf("the local embedder matched a paraphrase with no shared word: %v", ids)
	}
}

// TestEndToEndMemoriesOpenAI: with an OpenAI-compatible provider, a
// paraphrase that shares no word with a memory finds it by meaning, over
// HTTP; and a collection keeps the embedder it was written with. On the
// embedded store and on PostgreSQL (pgvector).
func TestEndToEndMemoriesOpenAI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, memoriesOpenAIScenario)
}

func memoriesOpenAIScenario(t *testing.T, dataDir string, backendEnv []string) {
	const key = "test-embed-key"
	fake, calls := fakeEmbeddings(t, key)
	url := startServe(t, dataDir, append(slices.Clone(backendEnv),
		"CAIRN_EMBED_PROVIDER=openai", "CAIRN_EMBED_BASE_URL="+fake.URL+"/v1", "CAIRN_EMBED_MODEL=fake-embed", "CAIRN_EMBED_API_KEY="+key)...)
	cs := connectHTTP(t, url)
	dentist := saveTwoCollections(t, cs)

	ids, hits := searchIDs(t, cs, map[string]any{"collection": "health", "query": paraphrase})
	if !slices.Equal(ids, []string{dentist}) {
		t.Fatalf("paraphrase search: %v, want the dentist memory", ids)
	}
	if m, _ := hits[0]["matched"].([]any); !slices.Equal(m, []any{"vector"}) {
		t.Errorf("matched = %v, want the vector signal only", hits[0]["matched"])
	}
	if sim, _ := hits[0]["similarity"].(float64); sim < 0.89 || sim > 0.91 {
		t.Errorf("similarity = %v, want 0.9", hits[0]["similarity"])
	}
	if ids, _ := searchIDs(t, cs, map[string]any{"collection": "travel", "query": paraphrase}); len(ids) != 0 {
		t.Errorf("the travel collection returned %v for the paraphrase", ids)
	}
	if calls.Load() < 4 {
		t.Errorf("the provider was called %d times, want the probe, two saves and the searches", calls.Load())
	}

	// The same data with the local embedder: the collection was written
	// with 8-dimensional vectors of fake-embed, so a 384-dimensional query
	// is refused, clearly.
	cs.Close()
	localEnv := append(backendEnv[:len(backendEnv):len(backendEnv)], "CAIRN_EMBED_PROVIDER=local")
	local := connectStdio(t, dataDir, localEnv...)
	env := callToolError(t, local, "search_memory", map[string]any{"collection": "health", "query": "dentist"})
	if env["code"] != "DIMENSION_MISMATCH" {
		t.Errorf("search with another embedder: %v, want DIMENSION_MISMATCH", env)
	}

	// cairn reembed rebuilds the collections with the local embedder, after
	// which the local embedder finds the memory by keyword.
	reembed := exec.Command(cairnBinary(t), "reembed", "--data-dir", dataDir)
	reembed.Env = append(os.Environ(), localEnv...)
	out, err := reembed.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn reembed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "2 collections checked, 2 memories re-embedded") || !strings.Contains(string(out), "reembed: 2 texts embedded with local:") {
		t.Errorf("cairn reembed printed:\n%s", out)
	}
	ids, _ = searchIDs(t, local, map[string]any{"collection": "health", "query": "dentist"})
	if !slices.Equal(ids, []string{dentist}) {
		t.Errorf("keyword search after reembed: %v, want the dentist memory", ids)
	}
}
