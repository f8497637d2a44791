package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReembedEntityEmbeddings stores entities with the local embedder, then
// switches provider with cairn reembed and back, on both backends: each
// switch rebuilds every entity embedding, and a second run finds nothing
// to do.
func TestReembedEntityEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		cs := connectStdio(t, dataDir, env...)
		callTool(t, cs, "store", map[string]any{"entities": []any{
			map[string]any{"entity_type": "company", "name": "Acme Anvils"},
			map[string]any{"entity_type": "person", "name": "Grace Hopper"},
		}})
		cs.Close()

		const key = "test-embed-key"
		fake, _ := fakeEmbeddings(t, key)
		openai := []string{"CAIRN_EMBED_PROVIDER=openai", "CAIRN_EMBED_BASE_URL=" + fake.URL + "/v1",
			"CAIRN_EMBED_MODEL=fake-embed", "CAIRN_EMBED_API_KEY=" + key}
		reembed := func(extra ...string) string {
			t.Helper()
			cmd := exec.Command(cairnBinary(t), "reembed", "--data-dir", dataDir)
			cmd.Env = append(append(os.Environ(), env...), extra...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("cairn reembed: %v\n%s", err, out)
			}
			return string(out)
		}
		// Whether stdio's worker embedded the entities before it stopped
		// or left them in the outbox, both are rebuilt with the new
		// embedder.
		for _, step := range []struct {
			name  string
			extra []string
			want  string
		}{
			{"to openai", openai, "entity embeddings: 2 re-embedded, 0 removed"},
			{"to openai again", openai, "entity embeddings: 0 re-embedded, 0 removed"},
			{"back to local", []string{"CAIRN_EMBED_PROVIDER=local"}, "entity embeddings: 2 re-embedded, 0 removed"},
		} {
			if out := reembed(step.extra...); !strings.Contains(out, step.want) {
				t.Errorf("reembed %s printed:\n%s\nwant a line with %q", step.name, out, step.want)
			}
		}
	})
}
