package consent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Audit record kinds.
const (
	// AuditCall is one tool call: its result code and latency.
	AuditCall = "call"
	// AuditDecision is one consent decision made during a call.
	AuditDecision = "consent"
)

// AuditRecord is one row of the audit log. It names who did what to which
// resource and how it ended; it never holds memory text or field values.
type AuditRecord struct {
	ID         int64
	At         time.Time
	UserID     string
	AgentID    string
	AgentName  string
	KeyID      string // empty for stdio, which runs without a key
	Transport  string // "http", "rest", "stdio", "inproc"
	Tool       string
	Kind       string // AuditCall or AuditDecision
	Action     Action // read or write; empty for calls
	Resource   string // empty for calls
	Decision   Effect // allow or deny; for calls, deny when consent refused the call
	ResultCode string // "OK" or the error code the call answered
	Latency    time.Duration
	RequestID  string
	// Count is how many decisions the record stands for: 1, but for the
	// allowed reads of one kind of resource in one call (a context load
	// reading entity types), which one record counts. 0 is read as 1.
	Count int
}

// AuditQuery selects audit records of one user, newest first.
type AuditQuery struct {
	UserID    string // required: users only see their own log
	AgentName string // empty: every agent
	Tool      string
	Kind      string
	Decision  Effect
	Since     time.Time // zero: no bound
	Until     time.Time // zero: no bound
	// BeforeID continues a listing: only records with a smaller id.
	BeforeID int64
	Limit    int // 0: 100
}

// AuditSink stores audit records; the control plane implements it.
// AppendAudit must write records in one transaction and return nil only once
// that transaction has committed: AuditLog passes its nil on to callers as
// the promise that their records are durable.
type AuditSink interface {
	AppendAudit(ctx context.Context, records []AuditRecord) error
}

// AuditLogOptions tune an AuditLog. The zero value is usable.
type AuditLogOptions struct {
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
	// BatchSize is the most records written in one transaction; 0 means
	// 256. The records of one Record call always share a transaction, so a
	// call with more records than BatchSize makes a bigger one.
	BatchSize int
}

// AuditLog writes audit records with group commit: Record returns only once
// the transaction holding its records has committed, so a caller that
// answers after Record returns nil never answers a call whose audit record
// a crash could lose. One writer goroutine takes everything queued (up to
// BatchSize records), writes it in one transaction and wakes every caller
// in it with the result, so concurrent calls share a commit: a caller waits
// for at most the commit under way and its own, and throughput grows with
// concurrency instead of paying a commit per call.
// How durable a commit is depends on the sink's database (see
// docs/consent.md).
type AuditLog struct {
	sink  AuditSink
	log   *slog.Logger
	batch int

	mu     sync.Mutex
	wake   *sync.Cond // signalled when queue grows or closed is set
	queue  []*auditRequest
	closed bool
	done   chan struct{} // closed when the writer has drained and stopped
}

// auditRequest is one Record or Flush call waiting for its records to be
// written.
type auditRequest struct {
	records []AuditRecord
	// started is set, under AuditLog.mu, when the writer takes the request;
	// from then on the caller can no longer withdraw it.
	started bool
	result  chan error // buffered: the writer never blocks on a caller
}

// ErrAuditClosed is returned by Record and Flush after Close.
var ErrAuditClosed = errors.New("consent: audit log closed")

// NewAuditLog starts an audit log writing to sink. Close stops it.
func NewAuditLog(sink AuditSink, opts AuditLogOptions) *AuditLog {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	a := &AuditLog{sink: sink, log: opts.Logger, batch: opts.BatchSize, done: make(chan struct{})}
	a.wake = sync.NewCond(&a.mu)
	go a.run()
	return a
}

// Record writes records and returns nil only once they have committed, in
// one transaction, possibly shared with other callers' records. A failed
// write returns its error, and none of the records may be taken as written.
//
// ctx bounds the wait, not the write: if ctx ends while the records are
// still queued, they are withdrawn and never written; if their write has
// already started it goes on, and Record returns ctx's error without
// knowing whether it committed. Either way Record reports them as not
// written.
func (a *AuditLog) Record(ctx context.Context, records ...AuditRecord) error {
	if len(records) == 0 {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.closed {
			return ErrAuditClosed
		}
		return nil
	}
	return a.wait(ctx, records)
}

// Flush waits until every record queued before it was called has been
// written, and returns the error of the last write, the one Flush itself
// waited for (nil if nothing was queued).
func (a *AuditLog) Flush(ctx context.Context) error {
	return a.wait(ctx, nil)
}

// wait queues a request and waits for its result. A request without
// records is a Flush: the writer takes requests in order, so when it is
// answered every request queued before it has been written.
func (a *AuditLog) wait(ctx context.Context, records []AuditRecord) error {
	req := &auditRequest{records: records, result: make(chan error, 1)}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrAuditClosed
	}
	a.queue = append(a.queue, req)
	a.wake.Signal()
	a.mu.Unlock()

	select {
	case err := <-req.result:
		return err
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !req.started {
		a.queue = slices.DeleteFunc(a.queue, func(r *auditRequest) bool { return r == req })
		return ctx.Err()
	}
	select {
	case err := <-req.result:
		// The write ended while we took the lock: its result is known.
		return err
	default:
		return fmt.Errorf("consent: audit write in progress, outcome unknown: %w", ctx.Err())
	}
}

// Close stops taking records, writes what is queued (its callers get the
// result as usual) and stops the writer.
func (a *AuditLog) Close() error {
	a.mu.Lock()
	a.closed = true
	a.wake.Signal()
	a.mu.Unlock()
	<-a.done
	return nil
}

// run is the writer: it takes what is queued, up to BatchSize records,
// writes it in one transaction and answers every request in it, until Close
// and an empty queue.
func (a *AuditLog) run() {
	defer close(a.done)
	var records []AuditRecord
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && !a.closed {
			a.wake.Wait()
		}
		if len(a.queue) == 0 {
			a.mu.Unlock()
			return
		}
		// Whole requests only, so that the records of one call commit
		// together; at least one, however big.
		n, size := 0, 0
		for n < len(a.queue) && (n == 0 || size+len(a.queue[n].records) <= a.batch) {
			size += len(a.queue[n].records)
			a.queue[n].started = true
			n++
		}
		taken := slices.Clone(a.queue[:n])
		a.queue = slices.Delete(a.queue, 0, n)
		a.mu.Unlock()

		records = records[:0]
		for _, r := range taken {
			records = append(records, r.records...)
		}
		err := a.write(records)
		for _, r := range taken {
			r.result <- err
		}
	}
}

// write appends one batch. The write outlives any caller's context: a
// caller that stops waiting does not cancel its neighbours' commit.
func (a *AuditLog) write(records []AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.sink.AppendAudit(ctx, records); err != nil {
		a.log.Error("audit log: write failed; the calls are answered as failed", "records", len(records), "err", err)
		return fmt.Errorf("consent: write audit log: %w", err)
	}
	return nil
}
