//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// A store's lock is an flock(2) on the file <store>-lock beside it. Every
// process that opens the store holds it shared for as long as it has the
// store open; Restore takes it exclusively, without waiting, and so
// refuses a store that anything has open. It is advisory and separate from
// SQLite's own locks, which it never touches.

func lockFile(store string) (*os.File, error) {
	f, err := os.OpenFile(store+"-lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock %s: %w", store, err)
	}
	return f, nil
}

// lockShared waits for and takes the store's lock shared.
func lockShared(store string) (unlock func(), err error) {
	f, err := lockFile(store)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: lock %s: %w", store, err)
	}
	return func() { f.Close() }, nil
}

// lockExclusive takes the store's lock exclusively, or fails with ErrInUse
// at once if another holder has it.
func lockExclusive(store string) (unlock func(), err error) {
	f, err := lockFile(store)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite: %s: %w (stop cairn serve and any other cairn process using it first)", store, ErrInUse)
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", store, err)
	}
	return func() { f.Close() }, nil
}
