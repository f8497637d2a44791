// Package isolatetest helps tests run interpretation in worker processes:
// the test binary is its own worker, and the hostile files of issue #34 are
// generated here (no binary fixture is committed).
package isolatetest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate"
)

// PIDFileEnv, when set in a worker's environment, names a file the worker
// writes its process id to, so that a test can check it is gone.
const PIDFileEnv = "CAIRN_TEST_WORKER_PIDFILE"

// ServeIfWorker makes a test binary a worker when the Runner started it:
// call it first in TestMain. It returns only in the test process itself.
func ServeIfWorker() {
	if os.Getenv(isolate.WorkerEnv) != "1" {
		return
	}
	if f := os.Getenv(PIDFileEnv); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if err := isolate.ServeWorker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Options returns Runner options that run the test binary as the worker,
// with PIDFileEnv when the test set it.
func Options(o isolate.Options) isolate.Options {
	o.Command = os.Args[0]
	if f := os.Getenv(PIDFileEnv); f != "" {
		o.Env = append(o.Env, PIDFileEnv+"="+f)
	}
	return o
}

// SelfReferencingPDF is issue #34's hostile PDF (about 240 bytes): its page
// tree's /Kids and /Parent hold the page tree itself, on which the PDF
// library loops forever, using CPU but no memory (checked by hand: pdfText
// had not returned after 5 s, with 3 MB of heap).
func SelfReferencingPDF() []byte {
	return interprettest.PDFObjects(
		"<</Type/Catalog/Pages 2 0 R>>",
		"<</Type/Pages/Kids[2 0 R]/Count 1/Parent 2 0 R>>",
	)
}

// AttributesDOCX is a DOCX whose word/document.xml holds one paragraph
// with n attributes (the same one: encoding/xml does not look for
// repeats): kilobytes compressed, nested three deep, and encoding/xml
// keeps every attribute of the element it reads in one token (4 million
// take over 300 MB), a memory bomb that no depth or size limit of the
// interpreter stops before the worker's memory limit does.
func AttributesDOCX(n int) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("word/document.xml")
	_, _ = w.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p`))
	chunk := []byte(strings.Repeat(` a=""`, 10000))
	for i := 0; i < n; i += 10000 {
		_, _ = w.Write(chunk)
	}
	_, _ = w.Write([]byte(`/></w:body></w:document>`))
	_ = zw.Close()
	return b.Bytes()
}

// NestedDOCX is a DOCX whose word/document.xml opens n paragraphs, each
// inside the last: kilobytes compressed. encoding/xml keeps a frame for
// every open element (10 million take 2.3 GB); the DOCX interpreter
// refuses more than 1,000 levels (FILE_TOO_COMPLEX, "xml depth").
func NestedDOCX(n int) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("word/document.xml")
	_, _ = w.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`))
	chunk := []byte(strings.Repeat("<w:p>", 10000))
	for i := 0; i < n; i += 10000 {
		_, _ = w.Write(chunk)
	}
	_ = zw.Close()
	return b.Bytes()
}
