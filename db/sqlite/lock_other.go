//go:build !unix

package sqlite

// Without flock(2), Restore cannot tell whether a process has the store
// open: the operator must stop cairn first (docs/operations.md says so).

func lockShared(string) (func(), error)    { return func() {}, nil }
func lockExclusive(string) (func(), error) { return func() {}, nil }
