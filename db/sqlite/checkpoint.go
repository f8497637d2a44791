package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Checkpoints. In WAL mode a commit appends the pages it changed to the
// WAL, and a checkpoint copies them back into the database file. By
// default SQLite checkpoints in the writer that commits past 1,000 pages
// of WAL, inside that writer's call: a store of 100 entities changes
// several hundred pages (every index with random keys gets a page per
// row once the store is large), so nearly every store paid for a
// checkpoint of the previous ones, half the CPU of a store at 100,000
// entities. A background goroutine now checkpoints instead, and the
// writers' own checkpoint stays as a backstop for when it falls behind.

// walBackstop is the WAL size, in pages, past which a committing writer
// still checkpoints (SQLite's wal_autocheckpoint): 64 MB of 4 KB pages.
const walBackstop = 16_000

// checkpointEvery is how often the background checkpointer runs.
const checkpointEvery = 100 * time.Millisecond

// checkpointer copies the WAL into the database file in the background,
// with a passive checkpoint: it never waits for readers or writers, and
// neither waits for it.
type checkpointer struct {
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
}

// startCheckpointer opens a connection of its own to the store at path
// and starts checkpointing.
func startCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c, nil
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// A failure (the disk is full, say) is the writers' to report:
		// their backstop checkpoint meets it too.
		_, _ = c.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	}
}

// stop ends the checkpointer and closes its connection.
func (c *checkpointer) stop() error {
	c.cancel()
	<-c.done
	return c.db.Close()
}
