package isolate

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/cairnkg/cairn/knowledge/interpret"
)

// A worker that dies of its memory limit says so however the runtime words
// it: near RLIMIT_DATA a new thread's stack cannot be mapped either, and
// the worker dies of pthread_create's EAGAIN before any allocation fails
// (seen in TestMemoryLimit on a loaded machine).
func TestWorkerFailedAtMemoryLimit(t *testing.T) {
	r := &Runner{o: Options{MemoryBytes: 256 << 20}}
	for _, stderr := range []string{
		"fatal error: runtime: out of memory\n",
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\n",
		"runtime: failed to create new OS thread (have 5 already; errno=11)\nruntime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc\n",
	} {
		err := r.workerFailed(&exec.Cmd{}, errors.New("exit status 2"), stderr)
		var tc *interpret.TooComplexError
		if !errors.As(err, &tc) || tc.Limit != "memory" {
			t.Errorf("stderr %q: %v, want the memory limit", stderr, err)
		}
	}
}
