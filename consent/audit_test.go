package consent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// gatedSink is an AuditSink whose writes block until the test releases
// them, one write per release, so that tests see what Record does while a
// commit is under way. A write "commits" (joins committed) only when it is
// released with a nil error.
type gatedSink struct {
	entered chan int          // the size of each write, when it starts
	release chan error        // the result of the write under way
	mu      sync.Mutex        // guards the fields below
	batches [][]string        // request ids of every write, in order
	done    map[string]bool   // request ids committed
	ctxs    []context.Context // the context of every write
}

func newGatedSink() *gatedSink {
	return &gatedSink{entered: make(chan int, 100), release: make(chan error), done: map[string]bool{}}
}

func (s *gatedSink) AppendAudit(ctx context.Context, records []AuditRecord) error {
	ids := make([]string, len(records))
	for i, r := range records {
		ids[i] = r.RequestID
	}
	s.mu.Lock()
	s.batches = append(s.batches, ids)
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	s.entered <- len(records)
	if err := <-s.release; err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.done[id] = true
	}
	return nil
}

func (s *gatedSink) committed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done[id]
}

func (s *gatedSink) writes() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

// record is one AuditRecord named by its request id.
func record(id string) AuditRecord {
	return AuditRecord{UserID: "u", Tool: "store", Kind: AuditCall, RequestID: id}
}

// recordAsync runs Record in a goroutine and returns where its error
// arrives.
func recordAsync(ctx context.Context, a *AuditLog, recs ...AuditRecord) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- a.Record(ctx, recs...) }()
	return ch
}

// waitQueued waits until n requests wait in the queue (not yet taken by the
// writer). It polls: the queue has no notification, and a test that guessed
// a sleep would be flaky on a loaded machine.
func waitQueued(t *testing.T, a *AuditLog, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.mu.Lock()
		got := len(a.queue)
		a.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// pending fails the test if ch already holds a result.
func pending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) before its write committed", what, err)
	default:
	}
}

func TestAuditLogRecordWaitsForCommit(t *testing.T) {
	sink := newGatedSink()
	a := NewAuditLog(sink, AuditLogOptions{})
	defer a.Close()

	res := recordAsync(t.Context(), a, record("r1"), record("r1-decision"))
	if n := <-sink.entered; n != 2 {
		t.Fatalf("first write has %d records, want the call's 2", n)
	}
	pending(t, res, "Record")
	sink.release <- nil
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if !sink.committed("r1") || !sink.committed("r1-decision") {
		t.Error("Record returned before the sink had committed its records")
	}
}

func TestAuditLogGroupCommit(t *testing.T) {
	sink := newGatedSink()
	a := NewAuditLog(sink, AuditLogOptions{BatchSize: 4})
	defer a.Close()

	// While the first write is under way, nine calls queue up; they share
	// the following commits, cut at BatchSize but never inside a call.
	first := recordAsync(t.Context(), a, record("first"))
	<-sink.entered
	var results []<-chan error
	for i := range 8 {
		results = append(results, recordAsync(t.Context(), a, record(fmt.Sprint(i))))
		waitQueued(t, a, i+1)
	}
	// A call with more records than BatchSize still commits in one piece.
	results = append(results, recordAsync(t.Context(), a, record("big"), record("big"), record("big"), record("big"), record("big")))
	waitQueued(t, a, 9)
	for _, r := range results {
		pending(t, r, "a queued Record")
	}
	for range 3 {
		sink.release <- nil
		<-sink.entered
	}
	sink.release <- nil
	for _, r := range append(results, first) {
		if err := <-r; err != nil {
			t.Fatal(err)
		}
	}
	want := [][]string{{"first"}, {"0", "1", "2", "3"}, {"4", "5", "6", "7"}, {"big", "big", "big", "big", "big"}}
	if got := sink.writes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("writes = %v, want %v", got, want)
	}
	for _, ctx := range sink.ctxs {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a write has no deadline")
		}
	}
}

func TestAuditLogWriteFails(t *testing.T) {
	sink := newGatedSink()
	a := NewAuditLog(sink, AuditLogOptions{})
	defer a.Close()

	first := recordAsync(t.Context(), a, record("first"))
	<-sink.entered
	second := recordAsync(t.Context(), a, record("a"))
	third := recordAsync(t.Context(), a, record("b"))
	waitQueued(t, a, 2)
	diskFull := errors.New("disk full")
	sink.release <- diskFull
	if err := <-first; !errors.Is(err, diskFull) {
		t.Errorf("Record with a failing write = %v, want %v", err, diskFull)
	}
	// Both queued calls share the next write, and its failure.
	if n := <-sink.entered; n != 2 {
		t.Fatalf("second write has %d records, want 2", n)
	}
	sink.release <- diskFull
	for _, r := range []<-chan error{second, third} {
		if err := <-r; !errors.Is(err, diskFull) {
			t.Errorf("Record in a failing shared write = %v, want %v", err, diskFull)
		}
	}
	// The log goes on once the sink recovers.
	res := recordAsync(t.Context(), a, record("c"))
	<-sink.entered
	sink.release <- nil
	if err := <-res; err != nil {
		t.Errorf("Record after the sink recovered = %v", err)
	}
}

func TestAuditLogContext(t *testing.T) {
	sink := newGatedSink()
	a := NewAuditLog(sink, AuditLogOptions{})
	defer a.Close()

	// A started write goes on when its caller stops waiting, and the caller
	// is not told its record was written, even though it then commits.
	ctx, cancel := context.WithCancel(t.Context())
	started := recordAsync(ctx, a, record("started"))
	<-sink.entered
	// A queued record whose caller stops waiting is withdrawn.
	qctx, qcancel := context.WithCancel(t.Context())
	queued := recordAsync(qctx, a, record("queued"))
	waitQueued(t, a, 1)
	cancel()
	if err := <-started; !errors.Is(err, context.Canceled) {
		t.Errorf("Record cancelled during its write = %v, want context.Canceled", err)
	}
	qcancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Errorf("Record cancelled while queued = %v, want context.Canceled", err)
	}
	waitQueued(t, a, 0)
	sink.release <- nil
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"started"}}; fmt.Sprint(sink.writes()) != fmt.Sprint(want) {
		t.Errorf("writes = %v, want %v: the withdrawn record was written", sink.writes(), want)
	}
}

func TestAuditLogCloseDrains(t *testing.T) {
	sink := newGatedSink()
	a := NewAuditLog(sink, AuditLogOptions{})

	first := recordAsync(t.Context(), a, record("first"))
	<-sink.entered
	queued := recordAsync(t.Context(), a, record("queued"))
	flushed := make(chan error, 1)
	go func() { flushed <- a.Flush(t.Context()) }()
	waitQueued(t, a, 2)
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	// Close refuses new records at once, but waits for the queued ones.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.mu.Lock()
		isClosed := a.closed
		a.mu.Unlock()
		if isClosed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if err := a.Record(t.Context(), record("late")); !errors.Is(err, ErrAuditClosed) {
		t.Errorf("Record after Close = %v, want ErrAuditClosed", err)
	}
	pending(t, closed, "Close")
	sink.release <- nil
	<-sink.entered
	pending(t, closed, "Close")
	sink.release <- nil
	for name, ch := range map[string]<-chan error{"first": first, "queued": queued, "flush": flushed, "close": closed} {
		if err := <-ch; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !sink.committed("queued") || sink.committed("late") {
		t.Errorf("after Close: queued committed %v, late committed %v; want true, false", sink.committed("queued"), sink.committed("late"))
	}
	if err := a.Flush(t.Context()); !errors.Is(err, ErrAuditClosed) {
		t.Errorf("Flush after Close = %v, want ErrAuditClosed", err)
	}
}
