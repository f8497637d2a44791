package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cairnkg/cairn/db/sqlite"
)

// newStore is what a start is about to create: the topmost missing
// directory of the data directory's path, or the store's file in a
// directory that exists. A failed start removes it, so that the next start
// begins afresh and a mistyped --data-dir leaves nothing behind. A store
// that existed before the start is never removed.
type newStore struct {
	// dir is the directory the start creates (with everything under it);
	// "" when the data directory exists.
	dir string
	// file is the store's file when the start creates it in a directory
	// that exists; "" otherwise.
	file string
	// fileDirs are the file bucket and upload spool directories (files.go)
	// the start creates beside that file.
	fileDirs []string
}

// noteNewStore looks, before a start opens the store cfg selects, at what
// that start will create. On PostgreSQL it is nothing: a failed start never
// drops what a database holds.
func noteNewStore(cfg appConfig) newStore {
	if cfg.databaseURL != "" {
		return newStore{}
	}
	dir := absPath(cfg.dataDir)
	missing := ""
	for p := dir; ; p = filepath.Dir(p) {
		_, err := os.Lstat(p)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// Whether p exists cannot be told: claim nothing.
			return newStore{}
		}
		missing = p
		if filepath.Dir(p) == p {
			break
		}
	}
	if missing != "" {
		return newStore{dir: missing}
	}
	file := filepath.Join(dir, sqlite.FileName)
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		n := newStore{file: file}
		for _, d := range []string{filepath.Join(dir, "blobs"), filepath.Join(dir, "spool")} {
			if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				n.fileDirs = append(n.fileDirs, d)
			}
		}
		return n
	}
	return newStore{}
}

// remove deletes what the start created; the store must be closed. It logs
// what it could not remove.
func (n newStore) remove(log *slog.Logger) {
	var errs []error
	switch {
	case n.dir != "":
		errs = append(errs, os.RemoveAll(n.dir))
	case n.file != "":
		// The file and SQLite's companions: the WAL, its index, and a
		// rollback journal should one be left, and the store lock (db/sqlite).
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", "-lock"} {
			if err := os.Remove(n.file + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		for _, d := range n.fileDirs {
			errs = append(errs, os.RemoveAll(d))
		}
	default:
		return
	}
	if err := errors.Join(errs...); err != nil {
		log.Warn("a failed start could not remove the store it created", "err", err)
		return
	}
	log.Debug("a failed start removed the store it created", "path", n.dir+n.file)
}

// startApp opens the app for serve and stdio, the commands that may create
// the store, and checks that the store takes writes: a store that cannot be
// written is refused at start rather than failing every call that writes.
// Until the caller calls a.started, the start counts as failed: an error
// here, or a.Close before a.started, removes the store this start created
// (see newStore).
func startApp(ctx context.Context, cfg appConfig, log *slog.Logger) (*app, error) {
	created := noteNewStore(cfg)
	a, err := openApp(ctx, cfg, log)
	if err != nil {
		created.remove(log)
		if refusesWrites(err) {
			b := &backend{describe: describeStore(cfg)}
			return nil, writeHint(b.notWritable(err), cfg)
		}
		return nil, err
	}
	a.discardStore = func() { created.remove(log) }
	if err := a.backend.writable(ctx); err != nil {
		a.Close()
		return nil, writeHint(err, cfg)
	}
	return a, nil
}

// started marks the start a success: from now on Close keeps the store.
func (a *app) started() { a.discardStore = nil }

// writeHint adds what to check to an error that says the store refuses
// writes.
func writeHint(err error, cfg appConfig) error {
	if !errors.Is(err, errNotWritable) {
		return err
	}
	if cfg.databaseURL != "" {
		return fmt.Errorf("%w; Cairn needs a database it can write: connect to the primary, not a standby, with default_transaction_read_only off", err)
	}
	return fmt.Errorf("%w; Cairn needs a store it can write: check that the data directory and the files in it are writable and the disk has room", err)
}

// describeStore names the store cfg selects, as backend.describe does,
// for errors raised before the backend is open.
func describeStore(cfg appConfig) string {
	if cfg.databaseURL != "" {
		return "postgres " + postgresName(cfg.databaseURL)
	}
	return "embedded " + absPath(cfg.dataDir)
}
