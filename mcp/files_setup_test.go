package mcp_test

import (
	"context"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/mcp"
)

// newFiles is a files service on a folder bucket with a worker that runs
// jobs as their agents' consent allows, and counts their attachments
// against the upload limit, until the test ends.
func newFiles(t testing.TB, control *controlplane.Store, know *knowledge.Service, pol *consent.Policy, limiter *consent.Limiter) *files.Service {
	t.Helper()
	bucket, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{NoTempDir: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := files.New(files.Options{Bucket: bucket, Meta: control, Jobs: control, Knowledge: know, SpoolDir: t.TempDir(),
		BaseURL: "http://cairn.test"})
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		fs.Run(ctx, files.RunnerOptions{Authorize: mcp.JobCaller(pol, control.OwnerPrincipal),
			AdmitUpload: mcp.UploadAdmitter(limiter)})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		bucket.Close()
	})
	return fs
}
