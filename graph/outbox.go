package graph

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The outbox lists entities whose snapshot changed, so that what is derived
// from them outside the graph's transactions (their embeddings) can be
// brought up to date after the change commits. An entry is written in the
// same transaction as the change (Tx.EnqueueOutbox): if the process stops
// before the derived data is written, the entry is still there at the next
// start. Consumers claim entries with a lease (Store.ClaimOutbox), process
// them and acknowledge them (Store.AckOutbox). Processing must be idempotent
// and read the entity's current state rather than trust the entry: an entry
// only says "look at this entity again".

// OutboxEntry names one entity whose derived data is out of date.
type OutboxEntry struct {
	UserID   string
	EntityID string
	// Seq grows each time the entity is enqueued again; AckOutbox deletes
	// the entry only if it was not enqueued again since it was claimed.
	Seq int64
	// EnqueuedAt is when the entity was first enqueued since its entry was
	// last deleted.
	EnqueuedAt time.Time
}

// OutboxClaim asks for a batch of outbox entries.
type OutboxClaim struct {
	// Limit is the most entries returned; it must be positive.
	Limit int
	// Lease is how long the entries stay claimed; it must be positive. An
	// entry whose lease ends before it is acknowledged is claimed again
	// (its consumer is presumed dead), so a lease must outlast processing.
	Lease time.Duration
	// Now is the time the lease starts; zero means Now(). Processes that
	// share a database should have clocks that agree to well within Lease.
	Now time.Time
}

// ClaimOutbox leases a batch of outbox entries (see Driver.ClaimOutbox).
func (s *Store) ClaimOutbox(ctx context.Context, c OutboxClaim) ([]OutboxEntry, error) {
	if c.Limit <= 0 {
		return nil, errors.New("graph: claim outbox: limit must be positive")
	}
	if c.Lease <= 0 {
		return nil, errors.New("graph: claim outbox: lease must be positive")
	}
	if c.Now.IsZero() {
		c.Now = Now()
	}
	c.Now = c.Now.UTC().Truncate(time.Microsecond)
	entries, err := s.d.ClaimOutbox(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("graph: claim outbox: %w", err)
	}
	return entries, nil
}

// AckOutbox settles claimed entries (see Driver.AckOutbox).
func (s *Store) AckOutbox(ctx context.Context, entries []OutboxEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := s.d.AckOutbox(ctx, entries); err != nil {
		return fmt.Errorf("graph: ack outbox: %w", err)
	}
	return nil
}

// ReleaseOutbox frees claimed entries for a new claim (see
// Driver.ReleaseOutbox).
func (s *Store) ReleaseOutbox(ctx context.Context, entries []OutboxEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := s.d.ReleaseOutbox(ctx, entries); err != nil {
		return fmt.Errorf("graph: release outbox: %w", err)
	}
	return nil
}

// OutboxStats is the state of the outbox at one moment, for metrics.
type OutboxStats struct {
	// Depth is how many entries wait, claimed or not.
	Depth int
	// Oldest is when the oldest entry was enqueued; zero when the outbox
	// is empty.
	Oldest time.Time
}

// OutboxStatter is an optional capability of a Driver: counting the
// outbox in one query, so that operators can watch it drain.
type OutboxStatter interface {
	OutboxStats(ctx context.Context) (OutboxStats, error)
}
