package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/transfer"
)

// TestImportErasesWhatTheExportErased (issue 37): cairn import of an
// export whose tombstones name an entity the store still holds erases it
// there, with the knowledge service as the import's eraser, and says so;
// the same import again erases nothing.
func TestImportErasesWhatTheExportErased(t *testing.T) {
	ctx := t.Context()
	srcDir, dstDir, files := t.TempDir(), filepath.Join(t.TempDir(), "data"), t.TempDir()
	a, err := openApp(ctx, appConfig{dataDir: srcDir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	u, err := a.control.CreateUser(ctx, "kim")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "claude"}
	res, err := a.knowledge.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": "Lou Reed"}}})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Entities[0].EntityID
	export := func(name string) string {
		t.Helper()
		path := filepath.Join(files, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := transfer.Export(ctx, transfer.Stores{Graph: a.graph, Control: a.control, Memories: a.memories, Bucket: a.bucket}, f,
			transfer.ExportOptions{Users: []consent.User{u}, CairnVersion: "test"}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	before := export("before.jsonl")
	if _, err := a.knowledge.Erase(ctx, c, knowledge.EraseRequest{Kind: knowledge.EraseEntity, IDs: []string{x}, Reason: "asked"}); err != nil {
		t.Fatal(err)
	}
	after := export("after.jsonl")

	importFile := func(path string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		code := run(ctx, []string{"import", "--data-dir", dstDir, path}, &environment{
			stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
		})
		if code != 0 {
			t.Fatalf("cairn import %s: exit %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(path), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	importFile(before)
	out := importFile(after)
	if !strings.Contains(out, "erased, as the export's tombstones say: ") || !strings.Contains(out, "1 entities") {
		t.Errorf("cairn import of the export after the erasure says:\n%s", out)
	}
	t.Logf("cairn import:\n%s", out)
	if out := importFile(after); strings.Contains(out, "erased, as") {
		t.Errorf("the same import again erased:\n%s", out)
	}

	b, err := openApp(ctx, appConfig{dataDir: dstDir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.knowledge.EntitySnapshot(ctx, c, x, time.Time{}); !errors.Is(err, knowledge.ErrEntityNotFound) {
		t.Errorf("the erased entity after the import: %v, want not found", err)
	}
	ts, err := b.control.GraphTombstones(ctx, u.ID)
	// The entity's, and its source's, which its erasure left with none.
	if err != nil || len(ts) != 2 || ts[0].Reason != "asked" || ts[0].Actor != "claude" || ts[1].Kind != "source" {
		t.Errorf("tombstones after the import: %+v, %v", ts, err)
	}
}
