//go:build !linux

package isolate

import (
	"os"
	"os/exec"
)

// limitSelf has no kernel limits to set outside Linux: the worker's memory
// is bounded only by debug.SetMemoryLimit (a target for the garbage
// collector, not a ceiling) and its time by the Runner's Timeout.
func limitSelf(memoryBytes, cpuSeconds int64) error { return nil }

func isolateProcess(cmd *exec.Cmd) {}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func cpuSignalled(st *os.ProcessState) bool { return false }

func killedBySomeoneElse(st *os.ProcessState) bool { return false }
