package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/vector/embed/minilm"
	"github.com/cairnkg/cairn/vector/embed/uselite"
)

// TestReembedIntoMiniLM saves memories with the default model, moves the
// store into the MiniLM space with cairn reembed --embed-provider minilm
// (which reports progress and what it moved), and searches it by meaning
// with --embed-provider minilm, and with no provider named, when the store
// keeps the space it is in. It needs both models built in
// (scripts/provision-model.sh, scripts/provision-minilm.sh); it skips with
// one line without them, and fails under CI=true.
func TestReembedIntoMiniLM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if !uselite.Available() || !minilm.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("a model is not built in; CI needs scripts/provision-model.sh and scripts/provision-minilm.sh")
		}
		t.Skip("model files not built in; run scripts/provision-model.sh and scripts/provision-minilm.sh")
	}
	dataDir := t.TempDir()
	cs := connectStdio(t, dataDir)
	saveNotes(t, cs)
	cs.Close()

	cmd := exec.Command(cairnBinary(t), "reembed", "--data-dir", dataDir, "--embed-provider", "minilm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn reembed --embed-provider minilm: %v\n%s", err, out)
	}
	t.Logf("cairn reembed --embed-provider minilm:\n%s", out)
	for _, want := range []string{
		"4 memories re-embedded, " + uselite.Name + " (512 dimensions) → " + minilm.Name,
		"reembed: ", // the progress line
		"texts embedded with " + minilm.Name,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("cairn reembed printed:\n%s\nwant a line with %q", out, want)
		}
	}

	cs = connectStdio(t, dataDir, "CAIRN_EMBED_PROVIDER=minilm")
	findsLasagna(t, cs)
	cs.Close()
	// Without a provider named, the store keeps the space it is in.
	cs = connectStdio(t, dataDir)
	findsLasagna(t, cs)
}
