//go:build unix

package controlplane

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists (signal 0:
// no signal sent, only the check; EPERM means it exists under another
// user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
