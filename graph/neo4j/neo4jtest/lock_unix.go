//go:build unix

package neo4jtest

import (
	"errors"
	"os"
	"syscall"
)

// fileLock is an exclusive flock(2) on a file: the kernel releases it when
// the process ends, however it ends, so a crashed test binary never leaves
// a server held.
type fileLock struct{ f *os.File }

// lockFile takes path's lock without waiting; ok is false if another open
// file (in this process or another) holds it.
func lockFile(path string) (l *fileLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &fileLock{f: f}, true, nil
}

func (l *fileLock) unlock() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
