package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/mcp"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// A file sent to store is kept, deduplicated, interpreted in the background
// and readable back through a signed URL; interpret: false stores only.
func TestStoreFileAndJobs(t *testing.T) {
	e := newEnv(t)
	var csv strings.Builder
	csv.WriteString("date,description,amount\n")
	for i := range 30 {
		fmt.Fprintf(&csv, "2026-02-%02d,Lunch %d,-%d.00\n", i%28+1, i, i+1)
	}
	out := e.mustCall(t, "store", map[string]any{"file_content": b64(csv.String()), "mime_type": "text/csv", "original_filename": "lunch.csv"})
	if out["deduplicated"] != false || out["mime_type"] != "text/csv" || out["job_id"] == nil || fmt.Sprint(out["file_size"]) != fmt.Sprint(csv.Len()) {
		t.Fatalf("store = %v", out)
	}
	job := waitJobDone(t, e, e.owner, out["job_id"].(string))
	if job["status"] != "succeeded" || fmt.Sprint(job["result"].(map[string]any)["observations_created"]) != "30" {
		t.Fatalf("job = %v", job)
	}
	status := e.mustCall(t, "arkiver_job_status", map[string]any{"jobId": out["job_id"]})
	if status["status"] != "completed" || status["progress"] != float64(100) {
		t.Fatalf("arkiver_job_status = %v", status)
	}
	again := e.mustCall(t, "store", map[string]any{"file_content": b64(csv.String()), "mime_type": "text/csv"})
	if again["deduplicated"] != true || again["source_id"] != out["source_id"] || again["job_id"] != nil || again["interpretation"] != nil {
		t.Fatalf("same bytes again = %v, want deduplicated without a new job", again)
	}
	ents := e.mustCall(t, "retrieve_entities", map[string]any{"entity_type": "transaction", "limit": 100})
	if fmt.Sprint(ents["total"]) != "30" {
		t.Fatalf("%v transactions", ents["total"])
	}
	for _, name := range []string{"retrieve_file_url", "get_file_url"} {
		u := e.mustCall(t, name, map[string]any{"file_path": out["source_id"], "expires_in": 60})
		if !strings.HasPrefix(u["signed_url"].(string), "http://cairn.test/files/"+out["source_id"].(string)+"?") || u["expires_at"] == "" {
			t.Fatalf("%s = %v", name, u)
		}
	}
	stored := e.mustCall(t, "store", map[string]any{"file_content": b64("just keep me"), "mime_type": "text/plain", "interpret": false})
	if stored["job_id"] != nil || stored["interpretation"] != nil {
		t.Fatalf("interpret false = %v", stored)
	}
	jobs := e.mustCall(t, "list_jobs", map[string]any{})
	if n := len(jobs["jobs"].([]any)); n != 1 {
		t.Fatalf("list_jobs has %d jobs, want 1", n)
	}
	if _, merr := e.call(t, "store", map[string]any{"file_content": b64("\x7fELF\x02\x01\x01\x00\x00\x00"), "mime_type": "text/plain"}); merr == nil || merr.Body.Code != mcp.CodeUnsupportedFileType {
		t.Fatalf("an executable: %v", merr)
	}
	if _, merr := e.call(t, "store", map[string]any{"file_path": "/etc/passwd"}); merr == nil || merr.Body.Code != mcp.CodeValidation {
		t.Fatalf("file_path without --file-roots: %v", merr)
	}
	if _, merr := e.call(t, "reinterpret", map[string]any{"source_id": "src_nope", "interpretation_config": map[string]any{}}); merr == nil || merr.Body.Code != mcp.CodeSourceNotFound {
		t.Fatalf("reinterpret of nothing: %v", merr)
	}
}

// reinterpret waits for its job and reports progress to a client that
// sent a progressToken.
func TestReinterpretReportsProgress(t *testing.T) {
	e := newEnv(t)
	out := e.mustCall(t, "store", map[string]any{"file_content": b64("# Plans\n\nSail in June.\n"), "mime_type": "text/markdown", "interpret": false})
	var mu sync.Mutex
	var progress []float64
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := e.server.MCPServer(mcp.FixedPrincipal(e.owner)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcpsdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params.Progress)
		},
	})
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcpsdk.CallToolParams{Name: "reinterpret", Arguments: map[string]any{"source_id": out["source_id"], "interpretation_config": map[string]any{"code_version": "2"}}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("reinterpret: %v %v", err, res)
	}
	got := res.StructuredContent.(map[string]any)
	if got["status"] != "succeeded" || got["observations_created"] != float64(1) || got["entities_created"] != float64(1) {
		t.Fatalf("reinterpret = %v", got)
	}
	// The client's handler runs notifications apart from the call's
	// answer, so the last may arrive just after it (CI84 saw none yet on
	// a busy machine): wait for it, a while at most.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got := slices.Clone(progress)
		mu.Unlock()
		if len(got) > 0 && got[len(got)-1] == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress notifications = %v, want some ending at 100", got)
		}
	}
}

// store's file_path reads only under the operator's roots, on stdio (and
// in-process) only; a symlink out of a root is refused.
func TestStoreFilePathRoots(t *testing.T) {
	e := newEnv(t)
	root, outside := t.TempDir(), t.TempDir()
	inside := filepath.Join(root, "plan.md")
	os.WriteFile(inside, []byte("# Plan\n"), 0o644)
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(secret, filepath.Join(root, "link.txt"))
	srv, err := mcp.NewServer(mcp.Deps{Knowledge: e.know, Files: e.files, FileRoots: []string{root}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(transport, path string) (json.RawMessage, *mcp.Error) {
		args, _ := json.Marshal(map[string]any{"file_path": path, "interpret": false})
		r := srv.Handle(t.Context(), mcp.Request{Principal: e.owner, Tool: "store", Args: args, Transport: transport})
		return r.Output, r.Err
	}
	out, merr := call(mcp.TransportStdio, inside)
	if merr != nil || !strings.Contains(string(out), `"mime_type":"text/markdown"`) {
		t.Fatalf("inside the root: %s %v", out, merr)
	}
	for name, tc := range map[string]struct{ transport, path, code string }{
		"outside":     {mcp.TransportStdio, secret, mcp.CodeValidation},
		"symlink out": {mcp.TransportStdio, filepath.Join(root, "link.txt"), mcp.CodeValidation},
		"dot-dot":     {mcp.TransportStdio, filepath.Join(root, "..", filepath.Base(outside), "secret.txt"), mcp.CodeValidation},
		"missing":     {mcp.TransportStdio, filepath.Join(root, "nope.txt"), mcp.CodeFileNotFound},
		"over HTTP":   {mcp.TransportHTTP, inside, mcp.CodeValidation},
		"over REST":   {mcp.TransportREST, inside, mcp.CodeValidation},
	} {
		if _, merr := call(tc.transport, tc.path); merr == nil || merr.Body.Code != tc.code {
			t.Errorf("%s: %v, want %s", name, merr, tc.code)
		}
	}
}
