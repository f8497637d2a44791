package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/base64"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate/isolatetest"
)

// serveRSSCeiling is the peak resident memory `cairn serve` may reach over
// the hostile corpus (docs/files.md, "Hostile files"): parsers run in
// worker processes with their own limits, so what serve holds is its own
// working set and the bounded results workers return.
const serveRSSCeiling = 512 << 20

// TestServeSurvivesHostileFiles is issue 34's check, through the built
// binary and a real MCP client: with a PDF whose page tree points at itself
// hanging in interpretation, and a corpus of hostile files (a DOCX of
// millions of nested paragraphs, a zip bomb, MIME nested 10,000 deep, a
// vCard folded into 16-byte lines, a CSV of 50,000 columns) queued before
// it, another user's upload is interpreted; every hostile job ends failed
// FILE_TOO_COMPLEX or succeeded; the peak RSS of serve stays under
// serveRSSCeiling; and SIGTERM ends serve within its shutdown timeout
// though the PDF's worker still hangs.
func TestServeSurvivesHostileFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Parallel: much of its time is the hanging PDF's worker waiting for
	// its CPU limit; serve's peak RSS is its own whatever runs beside it.
	t.Parallel()
	dir := t.TempDir()
	dd := []string{"--data-dir", dir}
	if out, err := exec.Command(cairnBinary(t), "migrate", "--data-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("cairn migrate: %v\n%s", err, out)
	}
	cairnAdmin(t, nil, false, append([]string{"user", "create", "bob"}, dd...)...)
	cairnAdmin(t, nil, false, append([]string{"agent", "create", "--user", "bob", "claude"}, dd...)...)
	for _, action := range []string{"read", "write"} {
		cairnAdmin(t, nil, false, append([]string{"consent", "allow", "--user", "bob", "--agent", "claude", "--resource", "*", "--action", action}, dd...)...)
	}
	bobKey := lastLine(cairnAdmin(t, nil, false, append([]string{"key", "create", "--user", "bob", "--agent", "claude"}, dd...)...))
	url, cmd, wait := startServeCmd(t, dir, defaultEmbedder, "CAIRN_RATE_LIMIT_UPLOAD=0", "CAIRN_RATE_LIMIT=0", "CAIRN_INTERPRET_TIMEOUT=5m", "CAIRN_INTERPRET_MEMORY=268435456")
	owner := connectHTTP(t, url)
	bob := connectWithKey(t, url, bobKey)
	callTool(t, owner, "get_user_context", map[string]any{"topic": "warm up the model"})
	atRest := peakRSS(t, cmd.Process.Pid)

	upload := func(cs *mcpsdk.ClientSession, name, mime string, data []byte) string {
		t.Helper()
		out := callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString(data), "mime_type": mime, "original_filename": name})
		return out["job_id"].(string)
	}
	hang := upload(owner, "loop.pdf", "application/pdf", isolatetest.SelfReferencingPDF())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if j := callTool(t, owner, "get_job", map[string]any{"job_id": hang}); j["status"] == "running" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the hanging PDF's job = %v, want running", j)
		}
	}
	corpus := []struct {
		name, mime string
		data       []byte
	}{
		{"nested.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", isolatetest.NestedDOCX(3_000_000)},
		{"bomb.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", zipBombDOCX(t, 160<<20)},
		{"deep.eml", "message/rfc822", interprettest.NestedEmail(10_000)},
		{"folded.vcf", "text/vcard", interprettest.FoldedVCard(700 << 10)},
		{"wide.csv", "text/csv", interprettest.WideCSV(50_000)},
	}
	var jobs []string
	for _, f := range corpus {
		jobs = append(jobs, upload(owner, f.name, f.mime, f.data))
	}
	mine := upload(bob, "lunch.csv", "text/csv", []byte("date,description,amount\n2026-02-01,Lunch,-12.50\n"))
	if j := waitJob(t, bob, mine); j["status"] != "succeeded" {
		t.Fatalf("the other user's job = %v, want succeeded while the PDF hangs", j)
	}
	for i, id := range jobs {
		j := waitJob(t, owner, id)
		code := ""
		if e, ok := j["error"].(map[string]any); ok {
			code, _ = e["code"].(string)
		}
		t.Logf("%s: %s %s", corpus[i].name, j["status"], code)
		if j["status"] != "succeeded" && code != "FILE_TOO_COMPLEX" {
			t.Errorf("%s: job = %v, want succeeded or failed FILE_TOO_COMPLEX", corpus[i].name, j)
		}
	}
	if j := callTool(t, owner, "get_job", map[string]any{"job_id": hang}); j["status"] != "running" {
		t.Fatalf("the hanging PDF's job = %v, want still running", j)
	}

	peak := peakRSS(t, cmd.Process.Pid)
	t.Logf("serve's peak RSS over the hostile corpus: %d MiB (%d MiB before it; ceiling %d MiB)", peak>>20, atRest>>20, serveRSSCeiling>>20)
	if peak > serveRSSCeiling {
		t.Errorf("serve's peak RSS %d MiB is over the %d MiB ceiling", peak>>20, serveRSSCeiling>>20)
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		t.Logf("serve exited %v after SIGTERM (%v)", time.Since(start).Round(10*time.Millisecond), err)
		if took := time.Since(start); took > shutdownTimeout+5*time.Second {
			t.Errorf("serve took %v to exit, want within its %v shutdown timeout", took, shutdownTimeout)
		}
	case <-time.After(shutdownTimeout + 20*time.Second):
		t.Fatalf("serve still running %v after SIGTERM", shutdownTimeout+20*time.Second)
	}
}

// peakRSS is a process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// zipBombDOCX is a DOCX whose document.xml inflates to size bytes of one
// paragraph's text, from a few hundred kilobytes.
//
// The text is size/1 MiB copies of one deflated MiB of "a": each copy is
// flushed to a byte boundary and refers back only to the "a"s just before
// it, so the copies can follow each other in one deflate stream. Deflating
// 160 MiB in the race-instrumented test binary took 12 s of CPU; this
// deflates one MiB.
func zipBombDOCX(t *testing.T, size int) []byte {
	t.Helper()
	head := []byte(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>`)
	tail := []byte(`</w:t></w:r></w:p></w:body></w:document>`)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	deflate := func(b []byte, final bool) []byte {
		var out bytes.Buffer
		w, err := flate.NewWriter(&out, flate.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if final {
			err = w.Close()
		} else {
			err = w.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	n := size / len(chunk)
	stream := deflate(head, false)
	deflated := deflate(chunk, false)
	crc := crc32.Update(0, crc32.IEEETable, head)
	for range n {
		stream = append(stream, deflated...)
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	stream = append(stream, deflate(tail, true)...)
	crc = crc32.Update(crc, crc32.IEEETable, tail)

	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, err := z.CreateRaw(&zip.FileHeader{
		Name: "word/document.xml", Method: zip.Deflate, CRC32: crc,
		CompressedSize64:   uint64(len(stream)),
		UncompressedSize64: uint64(len(head) + n*len(chunk) + len(tail)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(stream); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
