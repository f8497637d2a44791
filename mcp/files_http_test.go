package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
)

// multipartBody is a multipart/form-data body with one file part.
func multipartBody(t *testing.T, name, contentType string, data []byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + name + `"`}
	h["Content-Type"] = []string{contentType}
	w, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	mw.WriteField("metadata", `{"tags":["t"]}`)
	mw.Close()
	return mw.FormDataContentType(), &buf
}

func doJSON(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %d %q", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

func TestUploadRoutesAndSignedURLs(t *testing.T) {
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{})
	e.files.SetBaseURL(srv.URL)
	data := []byte("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.com\r\nEND:VCARD\r\n")
	upload := func(path, key string) (int, map[string]any) {
		ct, body := multipartBody(t, "ada.vcf", "application/octet-stream", data)
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+path, body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+key)
		return doJSON(t, req)
	}
	code, up := upload("/api/arkiver/upload", e.key)
	if code != 200 || up["success"] != true || up["mimeType"] != "text/vcard" || up["status"] != "uploaded" || up["fileName"] != "ada.vcf" {
		t.Fatalf("upload = %d %v", code, up)
	}
	fileID := up["fileId"].(string)
	code, again := upload("/api/files?interpret=true", e.key)
	if code != 200 || again["deduplicated"] != true || again["source_id"] != fileID || again["job_id"] != nil {
		t.Fatalf("same bytes again = %d %v", code, again)
	}
	status := func(id, key string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/api/arkiver/files/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		return doJSON(t, req)
	}
	if code, st := status(fileID, e.key); code != 200 || st["file"].(map[string]any)["status"] != "uploaded" {
		t.Fatalf("status = %d %v", code, st)
	}
	// Another user's key: the file does not exist for it.
	bob, err := e.control.CreateUser(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	_, bobKey := e.agent(t, bob.ID, "bobby", [3]string{"read", "*", "allow"}, [3]string{"write", "*", "allow"})
	if code, st := status(fileID, bobKey); code != 404 || st["error"].(map[string]any)["code"] != mcp.CodeFileNotFound {
		t.Fatalf("bob's status of alice's file = %d %v", code, st)
	}
	// An agent without sources write may not upload.
	_, noKey := e.agent(t, e.owner.UserID, "reader", [3]string{"read", "*", "allow"})
	if code, res := upload("/api/files", noKey); code != 403 || res["error"].(map[string]any)["code"] != mcp.CodeConsentDenied {
		t.Fatalf("upload without consent = %d %v", code, res)
	}

	u := e.mustCall(t, "retrieve_file_url", map[string]any{"file_path": fileID, "expires_in": 120})
	signed := u["signed_url"].(string)
	resp, err := http.Get(signed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) || resp.Header.Get("Content-Type") != "text/vcard" {
		t.Fatalf("signed GET = %d %q (%s)", resp.StatusCode, got, resp.Header.Get("Content-Type"))
	}
	altered, _ := url.Parse(signed)
	q := altered.Query()
	q.Set("exp", q.Get("exp")+"0")
	altered.RawQuery = q.Encode()
	for name, link := range map[string]string{"altered": altered.String(), "unsigned": srv.URL + "/files/" + fileID} {
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s URL: %d, want 403", name, resp.StatusCode)
		}
	}
	if _, merr := e.callAs(t, mustPrincipal(t, e, bobKey), "retrieve_file_url", map[string]any{"file_path": fileID}); merr == nil || merr.Body.Code != mcp.CodeFileNotFound {
		t.Fatalf("bob's URL for alice's file: %v", merr)
	}
}

func mustPrincipal(t *testing.T, e *env, key string) consent.Principal {
	t.Helper()
	p, err := consent.NewAuthenticator(e.control, nil).Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A 101 MB upload is FILE_TOO_LARGE, and the server does not hold it in
// memory: with a declared length it is refused before the body is read;
// streamed without one (chunked), it is read up to the limit into a spool
// file, while the heap stays far below the file's size.
func TestUploadTooLargeIsNotHeldInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 101 MB")
	}
	e, srv := newHTTPWith(t, envOptions{}, mcp.HTTPOptions{ReadTimeout: -1})
	const size = 101 << 20
	send := func(declared bool) (int, map[string]any) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			w, err := mw.CreateFormFile("file", "big.txt")
			if err != nil { // the server refused before reading
				pw.CloseWithError(err)
				return
			}
			chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB of text
			for sent := 0; sent < size; sent += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			mw.Close()
			pw.Close()
		}()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/files", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+e.key)
		if declared {
			// As curl does for a large body: the server answers before
			// the body is sent, and the body is never sent.
			req.ContentLength = size + 4096
			req.Header.Set("Expect", "100-continue")
		}
		return doJSON(t, req)
	}
	code, res := send(true)
	if code != http.StatusRequestEntityTooLarge || res["error"].(map[string]any)["code"] != mcp.CodeFileTooLarge {
		t.Fatalf("declared 101 MB: %d %v", code, res)
	}

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	})
	code, res = send(false)
	close(stop)
	wg.Wait()
	if code != http.StatusRequestEntityTooLarge || res["error"].(map[string]any)["code"] != mcp.CodeFileTooLarge {
		t.Fatalf("streamed 101 MB: %d %v", code, res)
	}
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("heap in use grew by %d KiB at most while 101 MB streamed through", grew>>10)
	// The test's own sender and the server share this heap; both stream.
	if grew > 32<<20 {
		t.Fatalf("heap grew by %d MiB during a 101 MB upload: the upload is held in memory", grew>>20)
	}
	if !strings.Contains(res["error"].(map[string]any)["message"].(string), "limit") {
		t.Fatalf("message = %v", res["error"])
	}
}
