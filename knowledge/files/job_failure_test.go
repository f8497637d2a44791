package files_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/interpret/interprettest"
)

// A job that stores entities and then fails reports, in its result and its
// message, what it stored: those entities stay (issue #34, D9). Here the
// agent may write contacts and notes but not files, so the e-mail's
// contacts and note are stored and the attachment is refused.
func TestFailedJobReportsWhatItStored(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "notes.eml", []byte(interprettest.SampleEmail))
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		noFiles := func(ctx context.Context, j files.Job) (knowledge.Caller, error) {
			return knowledge.Caller{UserID: j.UserID, AgentID: j.AgentName, Allowed: func(a knowledge.Action, r string) bool {
				return !(a == knowledge.Write && r == knowledge.ResourceSources)
			}}, nil
		}
		var told []files.Job
		runAll(t, e, files.RunnerOptions{Authorize: noFiles, OnFailed: func(_ context.Context, j files.Job) { told = append(told, j) }})
		j, err = e.svc.Job(t.Context(), alice, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("status %s, %s: %s; result %v", j.Status, j.ErrorCode, j.ErrorMessage, j.Result)
		if len(told) != 1 || told[0].ID != j.ID || told[0].Status != files.JobFailed || told[0].ErrorCode != j.ErrorCode || told[0].ErrorMessage != j.ErrorMessage {
			t.Errorf("OnFailed was told %+v, want the failed job once", told)
		}
		if j.Status != files.JobFailed || j.ErrorCode != "CONSENT_DENIED" {
			t.Fatalf("job = %s %s %q, want failed CONSENT_DENIED", j.Status, j.ErrorCode, j.ErrorMessage)
		}
		contacts := len(entitiesOf(t, e, alice, "contact"))
		notes := len(entitiesOf(t, e, alice, "note"))
		if contacts == 0 || notes == 0 {
			t.Fatalf("%d contacts and %d notes stored, want the e-mail's", contacts, notes)
		}
		created, _ := intOf(j.Result["entities_created"])
		observed, _ := intOf(j.Result["observations_created"])
		if created != contacts+notes || observed == 0 || j.Result["stored_before_failure"] != true {
			t.Fatalf("result = %v, want entities_created %d, observations and stored_before_failure", j.Result, contacts+notes)
		}
		if !strings.Contains(j.ErrorMessage, "before it failed the job stored") || !strings.Contains(j.ErrorMessage, "which stay") {
			t.Fatalf("message %q does not say what the job stored", j.ErrorMessage)
		}
	})
}

// A job that fails on its last attempt reports what every attempt stored,
// not only the last one, which resumed past the stored records and stored
// nothing. Here queuing the e-mail's attachment fails every time (the job
// store refuses it), a failure that may pass, so the job is retried until
// its attempts run out.
func TestRetriedJobReportsWhatEarlierAttemptsStored(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		email := []byte(interprettest.SampleEmail)
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "notes.eml", email)
		e.svc = files.New(files.Options{Bucket: e.bucket, Meta: e.control, Jobs: refuseAttachmentJobs{e.control, st.File.ID, nil},
			Knowledge: e.know, Now: e.clock.Now, SpoolDir: t.TempDir()})
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := runAll(t, e, files.RunnerOptions{Backoff: func(int) time.Duration { return 0 }}); n != files.DefaultMaxAttempts {
			t.Fatalf("ran %d attempts, want %d", n, files.DefaultMaxAttempts)
		}
		j, err = e.svc.Job(t.Context(), alice, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("status %s after %d attempts, %s: %s; result %v", j.Status, j.Attempts, j.ErrorCode, j.ErrorMessage, j.Result)
		if j.Status != files.JobFailed || j.ErrorCode != "PROCESSING_FAILED" {
			t.Fatalf("job = %s %s %q, want failed PROCESSING_FAILED", j.Status, j.ErrorCode, j.ErrorMessage)
		}
		stored := len(entitiesOf(t, e, alice, "contact")) + len(entitiesOf(t, e, alice, "note"))
		if created, _ := intOf(j.Result["entities_created"]); stored == 0 || created != stored {
			t.Fatalf("result = %v, want entities_created %d", j.Result, stored)
		}
		if !strings.Contains(j.ErrorMessage, "which stay") {
			t.Fatalf("message %q does not say what the job stored", j.ErrorMessage)
		}
	})
}

// refuseAttachmentJobs is a job store that cannot queue a job of any file
// but the e-mail's, as a database briefly unreachable: the jobs of the
// e-mail's attachments fail to be queued.
type refuseAttachmentJobs struct {
	files.JobStore
	email string
	// refusals, when set, is how many refusals are left; nil refuses
	// every time.
	refusals *atomic.Int32
}

func (s refuseAttachmentJobs) EnqueueJob(ctx context.Context, j files.Job) error {
	if j.FileID != s.email && (s.refusals == nil || s.refusals.Add(-1) >= 0) {
		return errors.New("the job store is unreachable")
	}
	return s.JobStore.EnqueueJob(ctx, j)
}

// An attachment an attempt stored but failed to queue is queued by the
// next attempt, which finds the file already stored: it is interpreted,
// not left as a file no job reads.
func TestRetryQueuesAnAttachmentAnEarlierAttemptStored(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "notes.eml", []byte(interprettest.SampleEmail))
		once := &atomic.Int32{}
		once.Store(1)
		e.svc = files.New(files.Options{Bucket: e.bucket, Meta: e.control, Jobs: refuseAttachmentJobs{e.control, st.File.ID, once},
			Knowledge: e.know, Now: e.clock.Now, SpoolDir: t.TempDir()})
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, e, files.RunnerOptions{Backoff: func(int) time.Duration { return 0 }})
		if j, err = e.svc.Job(t.Context(), alice, j.ID); err != nil || j.Status != files.JobSucceeded || j.Attempts != 2 {
			t.Fatalf("job = %+v (%v), want succeeded at its second attempt", j, err)
		}
		ids, _ := j.Result["attachment_file_ids"].([]any)
		if len(ids) != 1 {
			t.Fatalf("result = %v, want one attachment", j.Result)
		}
		js, err := e.svc.ListJobs(t.Context(), alice, files.JobQuery{FileID: ids[0].(string)})
		if err != nil || len(js) != 1 || js[0].Status != files.JobSucceeded {
			t.Fatalf("the attachment's jobs = %+v (%v), want one that succeeded", js, err)
		}
	})
}

// An upload over the quota fails its job at once with QUOTA_EXCEEDED:
// retrying cannot free room, so it takes no worker again (issue 34).
func TestQuotaFailureIsNotRetried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		email := []byte(interprettest.SampleEmail)
		e := newEnv(t, b, files.Options{QuotaBytes: int64(len(email)) + 10})
		st := put(t, e, alice, "notes.eml", email)
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := runAll(t, e, files.RunnerOptions{Backoff: func(int) time.Duration { return 0 }}); n != 1 {
			t.Fatalf("ran %d attempts, want 1", n)
		}
		j, err = e.svc.Job(t.Context(), alice, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != files.JobFailed || j.ErrorCode != "QUOTA_EXCEEDED" || !strings.Contains(j.ErrorMessage, "quota") {
			t.Fatalf("job = %s %s %q, want failed QUOTA_EXCEEDED", j.Status, j.ErrorCode, j.ErrorMessage)
		}
	})
}

// intOf reads a count from a job's result, stored as JSON (a float64).
func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}

// An e-mail's attachments are uploads of the key that queued the e-mail's
// job (issue 34, D5): each is admitted by AdmitUpload, as a call of the
// upload class would be; one refused is not stored, the job says so, and
// the attachments' own jobs carry the key on.
func TestAttachmentsCountAsTheKeysUploads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		st := put(t, e, alice, "notes.eml", []byte(interprettest.SampleEmail))
		by := files.QueuedBy{AgentID: "agent-claude", AgentName: "claude", KeyID: "key_1"}
		j, err := e.svc.Enqueue(t.Context(), alice, by, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		var asked []string
		refuse := func(_ context.Context, key string) (bool, error) { asked = append(asked, key); return false, nil }
		runAll(t, e, files.RunnerOptions{AdmitUpload: refuse})
		if j, err = e.svc.Job(t.Context(), alice, j.ID); err != nil || j.Status != files.JobSucceeded {
			t.Fatalf("job = %+v (%v), want succeeded", j, err)
		}
		refused, _ := j.Result["attachments_refused"].(map[string]any)
		if names, _ := refused["filenames"].([]any); len(names) != 1 || names[0] != "costs.csv" || j.Result["attachment_file_ids"] != nil {
			t.Fatalf("result = %v, want costs.csv refused and no attachment stored", j.Result)
		}
		if len(asked) != 1 || asked[0] != "key_1" {
			t.Fatalf("AdmitUpload asked for %v, want the job's key once", asked)
		}

		// Admitted, the attachment is stored and its job queued under the
		// same key.
		again, err := e.svc.Enqueue(t.Context(), alice, by, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, e, files.RunnerOptions{AdmitUpload: func(context.Context, string) (bool, error) { return true, nil }})
		if again, err = e.svc.Job(t.Context(), alice, again.ID); err != nil || again.Status != files.JobSucceeded {
			t.Fatalf("job = %+v (%v)", again, err)
		}
		ids, _ := again.Result["attachment_file_ids"].([]any)
		if len(ids) != 1 {
			t.Fatalf("result = %v, want the attachment stored", again.Result)
		}
		js, err := e.svc.ListJobs(t.Context(), alice, files.JobQuery{FileID: ids[0].(string)})
		if err != nil || len(js) != 1 || js[0].KeyID != "key_1" {
			t.Fatalf("the attachment's jobs = %+v (%v), want one queued under key_1", js, err)
		}
	})
}
