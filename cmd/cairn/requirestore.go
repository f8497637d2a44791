package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairnkg/cairn/db/sqlite"
)

// Only serve, stdio and migrate create an embedded store. Every other
// command works on a store that exists, so that a mistyped --data-dir (or a
// command run from the wrong directory) says so instead of creating, and
// then managing, an empty store of its own.

// errNoStore is the error of a command run on a data directory that holds
// no embedded store.
var errNoStore = errors.New("no Cairn store")

// requireStore returns errNoStore, with what to do, unless the embedded
// store in dataDir exists.
func requireStore(dataDir string) error {
	_, err := os.Stat(filepath.Join(dataDir, sqlite.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w at %s: run cairn serve (or cairn migrate) first, or pass --data-dir", errNoStore, absPath(dataDir))
	}
	return nil
}
