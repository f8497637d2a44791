package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

const (
	truncateTries = 50
	truncatePause = 20 * time.Millisecond
)

// TruncateWAL copies the whole write-ahead log into the database file and
// empties the log, so that the frames of pages as they were before an
// erasure are gone (docs/forgetting.md). It waits for readers (busy
// timeout) and tries again while another checkpoint or a writer holds it
// up; the caller holds its own process's write queue.
func (db *DB) TruncateWAL(ctx context.Context) error {
	for try := 1; ; try++ {
		var busy, logged, done int
		err := db.Write.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done)
		switch {
		case err != nil && !isBusyOrLocked(err):
			return fmt.Errorf("sqlite: truncate wal: %w", err)
		case err == nil && busy == 0:
			return nil
		case try == truncateTries:
			return fmt.Errorf("sqlite: truncate wal: blocked %d times by readers or writers", try)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlite: truncate wal: %w", ctx.Err())
		case <-time.After(truncatePause):
		}
	}
}

// isBusyOrLocked reports whether err is SQLITE_BUSY or SQLITE_LOCKED.
func isBusyOrLocked(err error) bool {
	var coded interface{ Code() int }
	return isBusy(err) || errors.As(err, &coded) && coded.Code()&0xff == sqlite3.SQLITE_LOCKED
}
