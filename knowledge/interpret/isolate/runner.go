package isolate

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cairnkg/cairn/knowledge/interpret"
)

// Defaults of Options.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMemoryBytes    = 1 << 30
	DefaultCPUSeconds     = 30
	DefaultMaxOutputBytes = 400 << 20
)

// Options configure a Runner. The zero value runs the current executable
// with the default limits.
type Options struct {
	// Command is the worker's executable and Args its arguments; empty
	// means os.Executable() with the argument WorkerArg.
	Command string
	Args    []string
	// Env is the worker's environment besides WorkerEnv=1, which is all
	// it gets otherwise: the service's own holds secrets (database URLs,
	// API keys) that a process reading hostile bytes has no use for.
	Env []string
	// Timeout bounds one parse in wall-clock time; 0 means DefaultTimeout.
	Timeout time.Duration
	// MemoryBytes bounds the memory one parse may take; 0 means
	// DefaultMemoryBytes. It is enforced by the kernel on Linux only (see
	// ServeWorker).
	MemoryBytes int64
	// CPUSeconds bounds the CPU time of one worker; 0 means
	// DefaultCPUSeconds. Linux only.
	CPUSeconds int64
	// MaxOutputBytes bounds the encoded Result read back; 0 means
	// DefaultMaxOutputBytes. A Result holds the file's text, its records
	// and its attachments, a few times the file's size at most.
	MaxOutputBytes int64
}

// Runner parses documents in worker processes. It is safe for concurrent
// use: each Parse starts a worker of its own.
type Runner struct {
	o Options
}

// New returns a Runner.
func New(o Options) *Runner {
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MemoryBytes = cmp.Or(o.MemoryBytes, DefaultMemoryBytes)
	o.CPUSeconds = cmp.Or(o.CPUSeconds, DefaultCPUSeconds)
	o.MaxOutputBytes = cmp.Or(o.MaxOutputBytes, DefaultMaxOutputBytes)
	if o.Command == "" && o.Args == nil {
		o.Args = []string{WorkerArg}
	}
	return &Runner{o: o}
}

// Parse runs interpret.Parse on d in a worker process and returns its
// Result. The worker is killed, with whatever it started, when ctx ends
// (Parse then returns ctx's cause) or when a limit is reached (a
// *interpret.TooComplexError naming it: "time", "memory", "cpu" or
// "output"). The parser's own errors come back as they were: wrapping
// interpret.ErrUnreadable, or a *interpret.TooComplexError for the
// parsers' input budgets.
func (r *Runner) Parse(ctx context.Context, d interpret.Document) (interpret.Result, error) {
	if err := context.Cause(ctx); err != nil {
		return interpret.Result{}, err
	}
	var in bytes.Buffer
	enc := gob.NewEncoder(&in)
	if err := enc.Encode(header{MemoryBytes: r.o.MemoryBytes, CPUSeconds: r.o.CPUSeconds}); err != nil {
		return interpret.Result{}, fmt.Errorf("isolate: encode the limits: %w", err)
	}
	if err := enc.Encode(request{Document: d}); err != nil {
		return interpret.Result{}, fmt.Errorf("isolate: encode the document: %w", err)
	}
	name := r.o.Command
	if name == "" {
		exe, err := os.Executable()
		if err != nil {
			return interpret.Result{}, fmt.Errorf("isolate: find the worker's executable: %w", err)
		}
		name = exe
	}
	cmd := exec.Command(name, r.o.Args...)
	cmd.Env = append([]string{WorkerEnv + "=1"}, r.o.Env...)
	cmd.Stdin = &in
	stderr := &head{max: 8 << 10}
	cmd.Stderr = stderr
	out := &capped{max: r.o.MaxOutputBytes, over: func() { killProcess(cmd) }}
	cmd.Stdout = out
	// The pipes close when the worker dies; WaitDelay bounds the wait
	// should something it started hold them open.
	cmd.WaitDelay = time.Second
	isolateProcess(cmd)
	if err := cmd.Start(); err != nil {
		return interpret.Result{}, fmt.Errorf("isolate: start the worker %s: %w", name, err)
	}
	out.mu.Lock()
	out.started = true
	out.mu.Unlock()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(r.o.Timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		killProcess(cmd)
		<-exited
		return interpret.Result{}, fmt.Errorf("isolate: parse stopped: %w", context.Cause(ctx))
	case <-timer.C:
		killProcess(cmd)
		<-exited
		return interpret.Result{}, fmt.Errorf("isolate: parse of %s (%s) stopped after %s: %w",
			d.Filename, d.MimeType, r.o.Timeout, &interpret.TooComplexError{Limit: "time"})
	}
	if out.overflow() {
		return interpret.Result{}, fmt.Errorf("isolate: the result of %s is over %d bytes: %w",
			d.Filename, r.o.MaxOutputBytes, &interpret.TooComplexError{Limit: "output"})
	}
	if waitErr != nil {
		return interpret.Result{}, r.workerFailed(cmd, waitErr, stderr.String())
	}
	var resp response
	if err := gob.NewDecoder(bytes.NewReader(out.buf.Bytes())).Decode(&resp); err != nil {
		return interpret.Result{}, fmt.Errorf("isolate: read the worker's result: %w", err)
	}
	if resp.Err != "" {
		return interpret.Result{}, remoteError(resp)
	}
	if resp.Result.Interpreter == "" {
		return interpret.Result{}, errors.New("isolate: the worker's result names no interpreter")
	}
	return resp.Result, nil
}

// workerFailed explains a worker that exited without a result: a limit
// the kernel enforced, or a crash.
func (r *Runner) workerFailed(cmd *exec.Cmd, waitErr error, stderr string) error {
	st := cmd.ProcessState
	first := firstLine(stderr)
	switch {
	case st != nil && (st.ExitCode() == exitCPU || cpuSignalled(st)):
		return fmt.Errorf("isolate: the worker used its %d s of CPU time: %w", r.o.CPUSeconds, &interpret.TooComplexError{Limit: "cpu"})
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "failed to allocate") ||
		// Near RLIMIT_DATA the runtime cannot map a new thread's stack
		// either: pthread_create answers EAGAIN ("Resource temporarily
		// unavailable"), and the worker dies of that instead.
		strings.Contains(stderr, "pthread_create failed") || strings.Contains(stderr, "failed to create new OS thread"):
		return fmt.Errorf("isolate: the worker went over its %d MiB of memory: %w", r.o.MemoryBytes>>20, &interpret.TooComplexError{Limit: "memory"})
	case st != nil && killedBySomeoneElse(st):
		if st.UserTime()+st.SystemTime() >= time.Duration(r.o.CPUSeconds)*time.Second {
			return fmt.Errorf("isolate: the worker used its %d s of CPU time: %w", r.o.CPUSeconds, &interpret.TooComplexError{Limit: "cpu"})
		}
		// The kernel's OOM killer is the other sender of SIGKILL.
		return fmt.Errorf("isolate: the worker was killed (out of memory?): %w", &interpret.TooComplexError{Limit: "memory"})
	case strings.Contains(stderr, "panic:") || strings.Contains(stderr, "fatal error:"):
		// The same bytes crash the parser again.
		return fmt.Errorf("%w: the parser crashed: %s", interpret.ErrUnreadable, first)
	}
	return fmt.Errorf("isolate: the worker failed: %v: %s", waitErr, first)
}

// remoteError rebuilds the parser's error so that errors.Is and errors.As
// find what they would have in process.
func remoteError(resp response) error {
	var errs []error
	if resp.TooComplex != "" {
		errs = append(errs, &interpret.TooComplexError{Limit: resp.TooComplex})
	}
	if resp.Unreadable {
		errs = append(errs, interpret.ErrUnreadable)
	}
	return &parserError{msg: resp.Err, errs: errs}
}

type parserError struct {
	msg  string
	errs []error
}

func (e *parserError) Error() string   { return e.msg }
func (e *parserError) Unwrap() []error { return e.errs }

// capped keeps what the worker writes up to max bytes; beyond, it calls
// over (which kills the worker) and discards the rest.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int64
	over    func()
	started bool
	full    bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full {
		return len(p), nil
	}
	if int64(c.buf.Len()+len(p)) > c.max {
		c.full = true
		c.buf.Reset()
		if c.started {
			c.over()
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) overflow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full
}

// head keeps the first max bytes written to the worker's stderr: the
// runtime's fatal error or panic comes first, its goroutines' stacks
// after.
type head struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *head) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p[:min(len(p), t.max-len(t.b))]...)
	return len(p), nil
}

func (t *head) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// firstLine is the line of the runtime's fatal error or panic in a
// worker's stderr, else its first line.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			return l
		}
	}
	return lines[0]
}
