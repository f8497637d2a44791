package files_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate"
	"github.com/cairnkg/cairn/knowledge/interpret/isolate/isolatetest"
)

// The tests of this file interpret hostile files (issue #34) in worker
// processes: the test binary is its own worker.
func TestMain(m *testing.M) {
	isolatetest.ServeIfWorker()
	os.Exit(m.Run())
}

// isolated returns files options that parse in worker processes under o.
func isolated(o isolate.Options) files.Options {
	return files.Options{Parser: isolate.New(isolatetest.Options(o))}
}

// waitJob polls a job until done says it is where the test wants it, or
// fails the test after 20 s.
func waitJob(t *testing.T, e *env, id string, done func(files.Job) bool) files.Job {
	t.Helper()
	owner := alice
	if strings.HasPrefix(id, "bob:") {
		owner, id = bob, strings.TrimPrefix(id, "bob:")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := e.svc.Job(t.Context(), owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is still %s (%s) after 20 s", id, j.Status, j.Progress.Stage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func interpreting(j files.Job) bool {
	return j.Status == files.JobRunning && j.Progress.Stage == "interpreting"
}

// A PDF whose page tree holds itself hangs the PDF library; the job fails
// at the timeout with FILE_TOO_COMPLEX and is not retried, while another
// worker interprets another user's file.
func TestHostilePDFFailsAtTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, isolated(isolate.Options{Timeout: 3 * time.Second}))
		hostile := put(t, e, alice, "loop.pdf", isolatetest.SelfReferencingPDF())
		jh, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, hostile.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			e.svc.Run(ctx, files.RunnerOptions{Workers: 2, Poll: 50 * time.Millisecond})
		}()
		t.Cleanup(func() { cancel(); <-stopped })
		start := time.Now()
		waitJob(t, e, jh.ID, interpreting)

		// Bob's file is interpreted by the other worker meanwhile.
		csv := put(t, e, bob, "bank.csv", transactionsCSV(5))
		jc, err := e.svc.Enqueue(t.Context(), bob, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, csv.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, e, "bob:"+jc.ID, func(j files.Job) bool { return j.Finished() })
		if j, _ := e.svc.Job(t.Context(), bob, jc.ID); j.Status != files.JobSucceeded {
			t.Fatalf("bob's job = %s %s %s", j.Status, j.ErrorCode, j.ErrorMessage)
		}
		if j, _ := e.svc.Job(t.Context(), alice, jh.ID); j.Finished() {
			t.Errorf("the hostile job ended (%s) before bob's: the test shows nothing", j.Status)
		}

		j := waitJob(t, e, jh.ID, files.Job.Finished)
		t.Logf("the %d-byte PDF's job failed after %s: %s: %s", len(isolatetest.SelfReferencingPDF()), time.Since(start).Round(time.Millisecond), j.ErrorCode, j.ErrorMessage)
		if j.Status != files.JobFailed || j.ErrorCode != "FILE_TOO_COMPLEX" || !strings.Contains(j.ErrorMessage, "time limit") {
			t.Fatalf("job = %s %s %q, want failed FILE_TOO_COMPLEX naming the time limit", j.Status, j.ErrorCode, j.ErrorMessage)
		}
		if j.Attempts != 1 {
			t.Errorf("attempts = %d, want 1: a file too complex is not retried", j.Attempts)
		}
	})
}

// A DOCX that makes the XML decoder take gigabytes fails at the worker's
// memory limit, and the test process carries on.
func TestMemoryBombFailsAtMemoryLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, isolated(isolate.Options{Timeout: 2 * time.Minute, MemoryBytes: 256 << 20}))
		st := put(t, e, alice, "attributes.docx", isolatetest.AttributesDOCX(4_000_000))
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, e, files.RunnerOptions{})
		j, err = e.svc.Job(t.Context(), alice, j.ID)
		if err != nil || j.Status != files.JobFailed || j.ErrorCode != "FILE_TOO_COMPLEX" || !strings.Contains(j.ErrorMessage, "memory limit") {
			t.Fatalf("job = %s %s %q, %v; want failed FILE_TOO_COMPLEX naming the memory limit", j.Status, j.ErrorCode, j.ErrorMessage, err)
		}
	})
}

// Cancelling a job whose file hangs the parser ends it cancelled within
// seconds.
func TestCancelDuringHang(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, isolated(isolate.Options{Timeout: time.Minute}))
		st := put(t, e, alice, "loop.pdf", isolatetest.SelfReferencingPDF())
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan error, 1)
		go func() {
			_, err := e.svc.RunOne(t.Context(), files.RunnerOptions{}, "worker-1")
			ran <- err
		}()
		waitJob(t, e, j.ID, interpreting)
		if _, err := e.svc.CancelJob(t.Context(), alice, j.ID); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		select {
		case err := <-ran:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("RunOne still runs 10 s after the job was cancelled")
		}
		t.Logf("cancelled after %s", time.Since(start).Round(time.Millisecond))
		if j, _ = e.svc.Job(t.Context(), alice, j.ID); j.Status != files.JobCancelled {
			t.Fatalf("job = %s, want cancelled", j.Status)
		}
	})
}

// The end of the runner's context (SIGTERM) kills the worker and RunOne
// returns promptly; the job keeps its lease, to resume after it.
func TestShutdownDuringHang(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		t.Setenv(isolatetest.PIDFileEnv, pidFile)
		e := newEnv(t, b, isolated(isolate.Options{Timeout: time.Minute}))
		st := put(t, e, alice, "loop.pdf", isolatetest.SelfReferencingPDF())
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ran := make(chan error, 1)
		go func() {
			_, err := e.svc.RunOne(ctx, files.RunnerOptions{}, "worker-1")
			ran <- err
		}()
		waitJob(t, e, j.ID, interpreting)
		var pid int
		for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ = strconv.Atoi(string(b))
			}
			if time.Now().After(deadline) {
				t.Fatal("the worker never started")
			}
		}
		cancel()
		select {
		case err := <-ran:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("RunOne still runs 10 s after its context ended")
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d still exists: kill 0: %v", pid, err)
		}
		if j, _ = e.svc.Job(t.Context(), alice, j.ID); j.Status != files.JobRunning {
			t.Errorf("job = %s, want running until its lease expires", j.Status)
		}
	})
}

// While a file is interpreted the lease is renewed: another worker does
// not take the job even as time passes beyond the lease.
func TestLeaseRenewedDuringHang(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, isolated(isolate.Options{Timeout: 4 * time.Second}))
		st := put(t, e, alice, "loop.pdf", isolatetest.SelfReferencingPDF())
		j, err := e.svc.Enqueue(t.Context(), alice, files.QueuedBy{AgentID: "agent-claude", AgentName: "claude"}, st.File.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := files.RunnerOptions{Lease: 3 * time.Second}
		ran := make(chan error, 1)
		go func() {
			_, err := e.svc.RunOne(t.Context(), o, "worker-1")
			ran <- err
		}()
		waitJob(t, e, j.ID, interpreting)
		// The clock runs at twice the real pace: 8 s pass during the
		// 4 s hang, well beyond the 3 s lease, which the heartbeat renews
		// every second (6 s of this clock).
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			e.clock.Advance(200 * time.Millisecond)
			if took, err := e.svc.RunOne(t.Context(), o, "worker-2"); err != nil || took {
				t.Fatalf("a second worker took the job (%v, %v)", took, err)
			}
		}
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		if j, _ = e.svc.Job(t.Context(), alice, j.ID); j.Status != files.JobFailed || j.ErrorCode != "FILE_TOO_COMPLEX" || j.Attempts != 1 {
			t.Fatalf("job = %s %s after %d attempts, want failed FILE_TOO_COMPLEX after 1", j.Status, j.ErrorCode, j.Attempts)
		}
	})
}
