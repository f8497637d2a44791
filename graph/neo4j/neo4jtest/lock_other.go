//go:build !unix

package neo4jtest

import "sync"

// fileLock, where flock(2) is missing, holds a server only within this
// process: run one test binary at a time against the servers there.
type fileLock struct{ path string }

var inProcess sync.Map

func lockFile(path string) (*fileLock, bool, error) {
	if _, taken := inProcess.LoadOrStore(path, true); taken {
		return nil, false, nil
	}
	return &fileLock{path: path}, true, nil
}

func (l *fileLock) unlock() { inProcess.Delete(l.path) }
