package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnkg/cairn/migrations"
)

// ErrInUse is the error of Restore on a store that a running process (cairn
// serve, stdio, an admin command) has open.
var ErrInUse = errors.New("store is in use")

// ErrNotAStore is the error of Check on a file that is not a sound Cairn
// store: not SQLite, damaged, or without Cairn's migrations.
var ErrNotAStore = errors.New("not a sound Cairn store")

// Info describes a store file that Check found sound.
type Info struct {
	Path  string
	Bytes int64
	// Version is the newest migration applied to it.
	Version int
	// Counts holds the rows of the main tables (users, entities,
	// observations, relationships, memories), for a person to compare.
	Counts map[string]int64
}

// countedTables are the tables Info.Counts reports, in the order a person
// reads them.
var countedTables = []string{"users", "entities", "observations", "relationships", "memories"}

// CountedTables returns the names of Info.Counts, in display order.
func CountedTables() []string { return append([]string(nil), countedTables...) }

// Backup writes a consistent copy of the store in dataDir to dst, while
// other processes (cairn serve) go on reading and writing it: SQLite's
// VACUUM INTO copies one read snapshot, compacted. The copy is written
// beside dst under a temporary name, checked (Check) and only then renamed
// to dst, so dst is either absent or a complete, sound store; an existing
// dst is an error unless overwrite is set.
func Backup(ctx context.Context, dataDir, dst string, overwrite bool) (Info, error) {
	src := filepath.Join(dataDir, FileName)
	if _, err := os.Stat(src); err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	if !overwrite {
		if _, err := os.Lstat(dst); err == nil {
			return Info{}, fmt.Errorf("sqlite: backup: %s already exists", dst)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".partial-*")
	if err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	// VACUUM INTO refuses a file that exists and is not empty; an empty one
	// it fills. Remove it anyway, so that a failure leaves nothing behind.
	os.Remove(tmpPath)
	defer os.Remove(tmpPath)

	db, err := sql.Open("sqlite", snapshotDSN(src))
	if err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpPath); err != nil {
		return Info{}, fmt.Errorf("sqlite: backup %s: %w", src, err)
	}
	if err := syncFile(tmpPath); err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	info, err := Check(ctx, tmpPath)
	if err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: the copy failed its check: %w", err)
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return Info{}, fmt.Errorf("sqlite: backup: %w", err)
	}
	info.Path = dst
	return info, nil
}

// Check opens the store file at path read-only and reports whether it is a
// sound Cairn store: SQLite's integrity check passes, Cairn's migration
// table is there, and no migration in it is newer than this binary knows.
// It changes nothing in the file.
func Check(ctx context.Context, path string) (Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, err
	}
	if !st.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%w: %s is not a regular file", ErrNotAStore, path)
	}
	db, err := sql.Open("sqlite", checkDSN(path))
	if err != nil {
		return Info{}, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return Info{}, fmt.Errorf("%w: %s: %v", ErrNotAStore, path, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return Info{}, err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return Info{}, fmt.Errorf("%w: %s: %v", ErrNotAStore, path, err)
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
		}
		return Info{}, fmt.Errorf("%w: %s: integrity check: %s", ErrNotAStore, path, strings.Join(problems, "; "))
	}
	status, err := migrations.List(ctx, db, migrations.SQLite)
	if err != nil {
		return Info{}, fmt.Errorf("%w: %s: %v", ErrNotAStore, path, err)
	}
	info := Info{Path: path, Bytes: st.Size(), Counts: map[string]int64{}}
	for _, s := range status {
		if s.Applied {
			info.Version = max(info.Version, s.Version)
		}
	}
	if info.Version == 0 {
		return Info{}, fmt.Errorf("%w: %s has no Cairn migrations applied", ErrNotAStore, path)
	}
	var newest int
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM cairn_schema_migrations").Scan(&newest); err != nil {
		return Info{}, fmt.Errorf("%w: %s: %v", ErrNotAStore, path, err)
	}
	if newest > info.Version {
		return Info{}, fmt.Errorf("%w: %s has migration %d, newer than this cairn knows (%d): use a newer cairn", ErrNotAStore, path, newest, info.Version)
	}
	for _, t := range countedTables {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return Info{}, fmt.Errorf("%w: %s: %v", ErrNotAStore, path, err)
		}
		info.Counts[t] = n
	}
	return info, nil
}

// Restore replaces the store in dataDir with the copy at src, after Check
// finds the copy sound. It refuses (ErrInUse) while any process has the
// store open, and holds the store's lock while it works, so no process
// opens it half-restored. The store it replaces is kept beside it as
// cairn.db.pre-restore-<time> (with its WAL), and its path returned; a
// dataDir without a store gets the copy and previous is empty. The restored
// store is migrated by the next process that opens it, if it is older.
func Restore(ctx context.Context, dataDir, src string) (info Info, previous string, err error) {
	info, err = Check(ctx, src)
	if err != nil {
		return Info{}, "", err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Info{}, "", err
	}
	dst := filepath.Join(dataDir, FileName)
	unlock, err := lockExclusive(dst)
	if err != nil {
		return Info{}, "", err
	}
	defer unlock()

	tmp := dst + ".restoring"
	if err := copyFile(src, tmp); err != nil {
		os.Remove(tmp)
		return Info{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		previous = dst + ".pre-restore-" + time.Now().UTC().Format("20060102T150405Z")
		// The WAL (and its index) go with the file they belong to:
		// SQLite finds them by name, and the WAL may hold committed
		// transactions not yet checkpointed into the file.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(dst+suffix, previous+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				os.Remove(tmp)
				return Info{}, "", fmt.Errorf("sqlite: restore: keep the current store: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return Info{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	if err := syncDir(dataDir); err != nil {
		return Info{}, "", fmt.Errorf("sqlite: restore: %w", err)
	}
	info.Path = dst
	return info, previous, nil
}

// snapshotDSN opens the live store for VACUUM INTO: no query_only (it
// would refuse writing the copy), WAL as the store is, and a busy timeout
// for the moment a checkpoint holds the lock.
func snapshotDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	return "file:" + path + "?" + q.Encode()
}

// checkDSN opens a file read-only and immutable: Check must not create a
// WAL beside a backup, nor change it in any way.
func checkDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("immutable", "1")
	return "file:" + path + "?" + q.Encode()
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
