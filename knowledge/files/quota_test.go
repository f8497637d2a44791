package files_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// Uploads at the same moment cannot together pass the quota: of N files of
// size S against a quota Q (N·S > Q), exactly ⌊Q/S⌋ are stored and every
// other upload is refused with a *QuotaError (issue #34, D8).
func TestQuotaHoldsUnderConcurrentUploads(t *testing.T) {
	const (
		n     = 10
		size  = 300_000
		quota = 1_000_000
	)
	// Rounds, each a user of its own, since one round does not always
	// interleave the uploads the way that lets them pass a racy check.
	const rounds = 5
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{QuotaBytes: quota})
		for round := range rounds {
			user := knowledge.Caller{UserID: fmt.Sprintf("user-quota-%d", round), AgentID: "claude"}
			concurrentUploads(t, e, user, n, size, quota)
		}
	})
}

// concurrentUploads puts n files of size bytes for c at the same moment and
// checks that the quota held.
func concurrentUploads(t *testing.T, e *env, c knowledge.Caller, n, size, quota int) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		stored  int
		refused int
		others  []error
	)
	for i := range n {
		// Distinct bytes, so that no upload is another's duplicate.
		data := bytes.Repeat([]byte{'a' + byte(i)}, size)
		wg.Go(func() {
			<-start
			_, err := e.svc.Put(t.Context(), c, bytes.NewReader(data), files.PutRequest{Filename: fmt.Sprintf("f%d.txt", i)})
			var qe *files.QuotaError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.As(err, &qe):
				refused++
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("uploads failed other than over quota: %v", others)
	}
	used, err := e.control.UsedBytes(t.Context(), c.UserID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d stored, %d refused, %d bytes used of %d", c.UserID, stored, refused, used, quota)
	if used > int64(quota) {
		t.Errorf("%s: %d bytes stored, over the quota of %d", c.UserID, used, quota)
	}
	if want := quota / size; stored != want || refused != n-want {
		t.Errorf("%s: %d stored and %d refused, want %d and %d", c.UserID, stored, refused, want, n-want)
	}
	if fs, err := e.control.StoredFiles(t.Context(), c.UserID); err != nil || len(fs) != stored {
		t.Errorf("%s: %d stored files, %v; want the %d answered", c.UserID, len(fs), err, stored)
	}
}

// A duplicate takes no more room: the same bytes again are answered
// deduplicated even when the user is at the quota, and a blob that cannot
// be written gives back its reservation.
func TestQuotaDuplicatesAndFailedWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{QuotaBytes: 1000})
		data := bytes.Repeat([]byte("a"), 1000)
		put(t, e, alice, "a.txt", data)
		if again := put(t, e, alice, "again.txt", data); !again.Deduplicated {
			t.Fatalf("same bytes at the quota = %+v, want deduplicated", again)
		}
		var qe *files.QuotaError
		if _, err := e.svc.Put(t.Context(), alice, bytes.NewReader([]byte("b")), files.PutRequest{Filename: "b.txt"}); !errors.As(err, &qe) ||
			qe.Used != 1000 || qe.Quota != 1000 || qe.Size != 1 {
			t.Fatalf("one byte over: %v, want QuotaError{1000, 1000, 1}", err)
		}

		// Bob's upload fails while its blob is written (the bucket is
		// closed): his row is released and the same bytes fit afterwards.
		f := newEnv(t, b, files.Options{QuotaBytes: 1000})
		bytesB := bytes.Repeat([]byte("b"), 800)
		f.bucket.Close()
		if _, err := f.svc.Put(t.Context(), bob, bytes.NewReader(bytesB), files.PutRequest{Filename: "b.txt"}); err == nil {
			t.Fatal("upload to a closed bucket succeeded")
		}
		used, err := f.control.UsedBytes(t.Context(), bob.UserID)
		if err != nil || used != 0 {
			t.Fatalf("after a failed write %d bytes used, %v; want 0", used, err)
		}
	})
}
