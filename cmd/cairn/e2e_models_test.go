package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/uselite"
)

// TestReembedIntoAnotherModel saves memories with use-lite, moves the
// store into the space of each other built-in model but the default with
// cairn reembed --embed-provider (which reports progress and what it
// moved), and searches it by meaning with that provider, and with no
// provider named, when the store keeps the space it is in. It needs the
// models built in (scripts/provision-model.sh, scripts/provision-minilm.sh);
// it skips with one line without them, and fails under CI=true.
func TestReembedIntoAnotherModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// bge, the default, has TestReembedUSELiteStoreIntoTheDefault.
	for _, provider := range []string{providerMiniLM} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			m := builtInModels[provider]
			if !uselite.Available() || !available(provider) {
				if os.Getenv("CI") == "true" {
					t.Fatal("a model is not built in; CI needs scripts/provision-model.sh and " + m.script)
				}
				t.Skip("model files not built in; run scripts/provision-model.sh and " + m.script)
			}
			dataDir := t.TempDir()
			cs := connectStdio(t, dataDir, "CAIRN_EMBED_PROVIDER="+providerUSELite)
			saveNotes(t, cs)
			cs.Close()

			cmd := exec.Command(cairnBinary(t), "reembed", "--data-dir", dataDir, "--embed-provider", provider)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("cairn reembed --embed-provider %s: %v\n%s", provider, err, out)
			}
			t.Logf("cairn reembed --embed-provider %s:\n%s", provider, out)
			for _, want := range []string{
				"4 memories re-embedded, " + uselite.Name + " (512 dimensions) → " + m.space,
				"reembed: ", // the progress line
				"texts embedded with " + m.space,
			} {
				if !strings.Contains(string(out), want) {
					t.Errorf("cairn reembed printed:\n%s\nwant a line with %q", out, want)
				}
			}

			cs = connectStdio(t, dataDir, "CAIRN_EMBED_PROVIDER="+provider)
			findsLasagna(t, cs)
			cs.Close()
			// Without a provider named, the store keeps the space it is in.
			cs = connectStdio(t, dataDir, defaultEmbedder)
			findsLasagna(t, cs)
		})
	}
}

// available reports whether the binary under test carries the files of
// the built-in model provider names (this test binary is built from the
// same tree).
func available(provider string) bool {
	_, err := openModel(provider)
	return err == nil
}
