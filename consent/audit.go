package consent

import (
	"context"
	"errors"
	"log/slog"
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
type AuditSink interface {
	AppendAudit(ctx context.Context, records []AuditRecord) error
}

// AuditLogOptions tune an AuditLog. The zero value is usable.
type AuditLogOptions struct {
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
	// FlushInterval is the longest a record waits before it is written; 0
	// means 200 ms.
	FlushInterval time.Duration
	// BatchSize is the most records written in one transaction; 0 means 256.
	BatchSize int
	// Buffer is how many records may wait; when it is full, Record blocks
	// until the writer catches up rather than lose a record. 0 means 8192.
	Buffer int
}

// AuditLog batches audit records and writes them in the background, so that
// a tool call does not wait on the disk for its audit rows. Close flushes.
type AuditLog struct {
	sink    AuditSink
	log     *slog.Logger
	every   time.Duration
	batch   int
	records chan AuditRecord
	flushes chan chan error

	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}
}

// ErrAuditClosed is returned by Record after Close.
var ErrAuditClosed = errors.New("consent: audit log closed")

// NewAuditLog starts an audit log writing to sink.
func NewAuditLog(sink AuditSink, opts AuditLogOptions) *AuditLog {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 200 * time.Millisecond
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 8192
	}
	a := &AuditLog{
		sink: sink, log: opts.Logger, every: opts.FlushInterval, batch: opts.BatchSize,
		records: make(chan AuditRecord, opts.Buffer), flushes: make(chan chan error),
		closing: make(chan struct{}), done: make(chan struct{}),
	}
	go a.run()
	return a
}

// Record queues records for writing. It returns without waiting for the
// disk unless the buffer is full.
func (a *AuditLog) Record(ctx context.Context, records ...AuditRecord) error {
	for _, r := range records {
		select {
		case <-a.closing:
			return ErrAuditClosed
		default:
		}
		select {
		case a.records <- r:
		case <-a.closing:
			return ErrAuditClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Flush writes every record queued before it was called, and returns the
// error of the last write.
func (a *AuditLog) Flush(ctx context.Context) error {
	ch := make(chan error, 1)
	select {
	case a.flushes <- ch:
	case <-a.done:
		return ErrAuditClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued and stops the writer.
func (a *AuditLog) Close() error {
	a.closeOnce.Do(func() { close(a.closing) })
	<-a.done
	return nil
}

func (a *AuditLog) run() {
	defer close(a.done)
	tick := time.NewTicker(a.every)
	defer tick.Stop()
	pending := make([]AuditRecord, 0, a.batch)
	write := func() error {
		var err error
		for len(pending) > 0 {
			n := min(len(pending), a.batch)
			// The write outlives any caller's context: records already
			// accepted must land.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = a.sink.AppendAudit(ctx, pending[:n])
			cancel()
			if err != nil {
				a.log.Error("audit log: write failed; records dropped", "records", n, "err", err)
			}
			pending = pending[n:]
		}
		pending = pending[:0:cap(pending)]
		return err
	}
	drain := func() {
		for {
			select {
			case r := <-a.records:
				pending = append(pending, r)
			default:
				return
			}
		}
	}
	for {
		select {
		case r := <-a.records:
			pending = append(pending, r)
			if len(pending) >= a.batch {
				write()
			}
		case <-tick.C:
			write()
		case ch := <-a.flushes:
			drain()
			ch <- write()
		case <-a.closing:
			drain()
			write()
			return
		}
	}
}
