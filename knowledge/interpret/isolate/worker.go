package isolate

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/cairnkg/cairn/knowledge/interpret"
)

// WorkerArg is the argument that makes the cairn binary a worker.
const WorkerArg = "interpret-worker"

// WorkerEnv is set to "1" in every worker's environment. A test binary,
// run as its own worker (Options.Command), checks it in TestMain and calls
// ServeWorker instead of running its tests.
const WorkerEnv = "CAIRN_INTERPRET_WORKER"

// exitCPU is the worker's exit status when it used up its CPU time.
const exitCPU = 3

// ServeWorker is the worker's side: it reads the limits, applies them to
// its own process, reads one document, parses it with interpret.Parse and
// writes the Result (or the parser's error). It is meant to be the whole
// of a worker process: when the CPU limit is reached it exits the process
// with a status the Runner recognises.
//
// Memory is bounded by debug.SetMemoryLimit, which makes the garbage
// collector keep the heap under the limit while it can, and on Linux by
// RLIMIT_DATA, which makes the kernel refuse private writable mappings
// beyond it, so that a parser holding more than the limit dies with "fatal
// error: out of memory" instead of taking the host's memory. RLIMIT_AS is
// not used: it bounds address space, not memory, and the Go runtime
// reserves address space far ahead of use (a Go binary cannot start under
// RLIMIT_AS = 256 MiB, and under 1 GiB it fails with 400 MB of heap in use;
// the race detector's shadow memory needs terabytes of it). RLIMIT_DATA is
// set to what the process has mapped when it starts plus the limit, which
// makes the limit mean "memory the parse may take" whatever the runtime (or
// the race detector) mapped before.
func ServeWorker(stdin io.Reader, stdout io.Writer) error {
	dec := gob.NewDecoder(bufio.NewReader(stdin))
	var h header
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("isolate: read the limits: %w", err)
	}
	if h.MemoryBytes > 0 {
		debug.SetMemoryLimit(h.MemoryBytes)
	}
	if err := limitSelf(h.MemoryBytes, h.CPUSeconds); err != nil {
		return fmt.Errorf("isolate: limit the worker: %w", err)
	}
	var req request
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("isolate: read the document: %w", err)
	}
	res, err := parse(req.Document)
	out := response{Result: res}
	if err != nil {
		out = response{Err: err.Error(), Unreadable: errors.Is(err, interpret.ErrUnreadable)}
		var tc *interpret.TooComplexError
		if errors.As(err, &tc) {
			out.TooComplex = tc.Limit
		}
	}
	w := bufio.NewWriter(stdout)
	if err := gob.NewEncoder(w).Encode(out); err != nil {
		return fmt.Errorf("isolate: write the result: %w", err)
	}
	return w.Flush()
}

// parse is interpret.Parse with a parser's panic turned into an unreadable
// file: the same bytes would panic again.
func parse(d interpret.Document) (r interpret.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: parser panic: %v", interpret.ErrUnreadable, p)
		}
	}()
	return interpret.Parse(d)
}

// cpuExceeded ends the worker when the kernel says its CPU time is used up
// (SIGXCPU), with the status the Runner maps onto the "cpu" limit.
func cpuExceeded() {
	fmt.Fprintln(os.Stderr, "cairn interpret-worker: CPU time limit reached")
	os.Exit(exitCPU)
}
