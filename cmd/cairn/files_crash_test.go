package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/migrations"
)

// restCall calls a tool through the REST facade and returns its result.
func restCall(t *testing.T, base, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	body, _ := json.Marshal(args)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp/call/"+tool, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testOwnerKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var answer struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
		Error   map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return nil, err
	}
	if !answer.Success {
		return nil, fmt.Errorf("%s: %v", tool, answer.Error)
	}
	return answer.Result, nil
}

// uploadFile posts a file to /api/files and returns the answer.
func uploadFile(t *testing.T, base, name string, data []byte, query string) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(data)
	mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/api/files"+query, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+testOwnerKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload %s: %d %s", name, resp.StatusCode, b)
	}
	return m
}

// TestKilledJobCompletesOnce kills `cairn serve` with SIGKILL while it
// interprets a large CSV, restarts it on the same store, and checks that
// the job resumes and completes once, with exactly one observation per
// row: none lost, none recorded twice.
func TestKilledJobCompletesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it during a job")
	}
	// Parallel: most of its time is waiting for the killed job's lease
	// to expire.
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"CAIRN_RATE_LIMIT=0", "CAIRN_RATE_LIMIT_STORE=0", "CAIRN_RATE_LIMIT_UPLOAD=0", "CAIRN_JOB_WORKERS=1", "CAIRN_JOB_LEASE=2s"}
	// Enough rows that the job is far from done when its first batch is
	// stored (a batch is 100 rows; the test polls every 20 ms).
	const rows = 6000
	var csv strings.Builder
	csv.WriteString("Date,Description,Amount,Reference\n")
	for i := range rows {
		fmt.Fprintf(&csv, "2025-%02d-%02d,Card payment %d,-%d.%02d,TX%06d\n", i%12+1, i%28+1, i, i%500+1, i%100, i)
	}
	url, kill := startServeProcess(t, dataDir, env...)
	base := strings.TrimSuffix(url, "/mcp")
	up := uploadFile(t, base, "statement.csv", []byte(csv.String()), "?interpret=true")
	jobID, _ := up["job_id"].(string)
	if jobID == "" {
		t.Fatalf("upload = %v, want a job", up)
	}
	// Kill once the job has stored some rows, but not all.
	var done float64
	for deadline := time.Now().Add(2 * time.Minute); ; {
		j, err := restCall(t, base, "get_job", map[string]any{"job_id": jobID})
		if err != nil {
			t.Fatal(err)
		}
		done, _ = j["items_done"].(float64)
		if j["status"] == "succeeded" {
			t.Fatalf("the job finished before the kill (%v rows); make the file larger", done)
		}
		if done > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job made no progress: %v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	kill()
	t.Logf("killed with %v of %d rows stored", done, rows)

	url = startServe(t, dataDir, env...)
	base = strings.TrimSuffix(url, "/mcp")
	var j map[string]any
	for deadline := time.Now().Add(3 * time.Minute); ; {
		var err error
		if j, err = restCall(t, base, "get_job", map[string]any{"job_id": jobID}); err != nil {
			t.Fatal(err)
		}
		if j["status"] != "queued" && j["status"] != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not finish after the restart: %v", j)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if j["status"] != "succeeded" || j["attempts"] != float64(2) || j["items_done"] != float64(rows) {
		t.Fatalf("job after restart = %v; want succeeded on its second attempt with every row", j)
	}
	ents, err := restCall(t, base, "retrieve_entities", map[string]any{"entity_type": "transaction", "limit": 1})
	if err != nil {
		t.Fatal(err)
	}
	if ents["total"] != float64(rows) {
		t.Fatalf("%v transactions, want %d", ents["total"], rows)
	}
	// Count observations in the store itself (read-only, beside the
	// running server).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, sqlite.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var obs, distinct int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT entity_id) FROM observations WHERE entity_type = 'transaction'`).Scan(&obs, &distinct); err != nil {
		t.Fatal(err)
	}
	if obs != rows || distinct != rows {
		t.Fatalf("%d observations of %d transactions, want %d of %d: a row was lost or recorded twice", obs, distinct, rows, rows)
	}
}

// TestStartRepairsInterruptedUpload stages what a crash between the blob
// and the source leaves (a pending row and its blob, and a pending row
// whose blob was never written), then starts serve: the first file is
// complete and readable, the second gone.
func TestStartRepairsInterruptedUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	// A first start creates the store and its owner.
	_, kill := startServeProcess(t, dataDir)
	kill()
	db, err := sqlite.Open(t.Context(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(db.Write, migrations.SQLite)
	owner, err := cp.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(filepath.Join(dataDir, "blobs"), &fileblob.Options{NoTempDir: true})
	if err != nil {
		t.Fatal(err)
	}
	stage := func(data []byte, writeBlob bool) string {
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])
		f := files.File{ID: knowledge.SourceID(owner.UserID, hash), UserID: owner.UserID, ContentHash: hash,
			BlobKey: files.BlobKey(owner.UserID, hash), Size: int64(len(data)), MimeType: "text/plain", Filename: "x.txt",
			CreatedAt: time.Now().Add(-time.Hour)}
		if _, _, err := cp.BeginFile(t.Context(), f); err != nil {
			t.Fatal(err)
		}
		if writeBlob {
			if err := bucket.WriteAll(t.Context(), f.BlobKey, data, nil); err != nil {
				t.Fatal(err)
			}
		}
		return f.ID
	}
	written := stage([]byte("the blob was written, then the process died"), true)
	lost := stage([]byte("the process died before the blob"), false)
	bucket.Close()
	db.Close()

	base := strings.TrimSuffix(startServe(t, dataDir), "/mcp")
	u, err := restCall(t, base, "retrieve_file_url", map[string]any{"file_path": written})
	if err != nil {
		t.Fatalf("the repaired file: %v", err)
	}
	resp, err := http.Get(u["signed_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "the blob was written, then the process died" {
		t.Fatalf("repaired file's bytes = %q", got)
	}
	if _, err := restCall(t, base, "retrieve_file_url", map[string]any{"file_path": lost}); err == nil || !strings.Contains(err.Error(), "FILE_NOT_FOUND") {
		t.Fatalf("the file whose blob was never written: %v, want FILE_NOT_FOUND", err)
	}
}
