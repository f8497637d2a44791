package graph

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Store is the portable graph that the rest of Cairn uses. It wraps a Driver
// and adds the rules every backend must obey.
type Store struct {
	d Driver
	// onOutbox is called after a write transaction that enqueued outbox
	// entries commits.
	onOutbox atomic.Pointer[func()]
}

// NewStore returns a Store over d. The Store owns d: Close closes it.
func NewStore(d Driver) *Store { return &Store{d: d} }

// Tx is one transaction on the graph: the driver's primitives, plus the
// operations whose rules live in this package (CreateRelationship,
// Traverse, ShortestPath).
type Tx struct {
	DriverTx
	// enqueued is set once the transaction enqueues outbox entries.
	enqueued bool
}

// Update runs fn in one read-write transaction. fn may be retried and must
// have no side effects outside the transaction.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	enqueued := false
	err := s.d.Update(ctx, func(dt DriverTx) error {
		tx := &Tx{DriverTx: dt}
		err := fn(tx)
		enqueued = tx.enqueued
		return err
	})
	if err == nil && enqueued {
		if f := s.onOutbox.Load(); f != nil {
			(*f)()
		}
	}
	return err
}

// OnOutbox sets a function that Update calls after each committed
// transaction that enqueued outbox entries, so that a consumer in this
// process need not poll for them (entries of other processes still need
// polling). fn must not block; nil removes it.
func (s *Store) OnOutbox(fn func()) {
	if fn == nil {
		s.onOutbox.Store(nil)
		return
	}
	s.onOutbox.Store(&fn)
}

// EnqueueOutbox enqueues entities (see DriverTx.EnqueueOutbox) and marks the
// transaction, so that Update tells the OnOutbox function once it commits.
func (tx *Tx) EnqueueOutbox(ctx context.Context, userID string, entityIDs []string, at time.Time) error {
	if err := tx.DriverTx.EnqueueOutbox(ctx, userID, entityIDs, at); err != nil {
		return err
	}
	tx.enqueued = tx.enqueued || len(entityIDs) > 0
	return nil
}

// View runs fn in one read-only transaction.
func (s *Store) View(ctx context.Context, fn func(*Tx) error) error {
	return s.d.View(ctx, func(dt DriverTx) error { return fn(&Tx{DriverTx: dt}) })
}

// Close closes the driver.
func (s *Store) Close() error { return s.d.Close() }

// ResolveEntity returns the entity with id, following merges to the entity
// it ended up in. It returns ErrNotFound when id does not exist.
func (tx *Tx) ResolveEntity(ctx context.Context, userID, id string) (Entity, error) {
	e, err := tx.Entity(ctx, userID, id)
	for hops := 0; err == nil && e.Merged(); hops++ {
		if hops > 64 {
			return Entity{}, fmt.Errorf("graph: merge chain from %s is longer than 64", id)
		}
		e, err = tx.Entity(ctx, userID, e.MergedInto)
	}
	if err != nil {
		return Entity{}, err
	}
	return e, nil
}

// ResolveEntities returns what ResolveEntity returns for each of ids, keyed
// by the id asked for; an id for which ResolveEntity would return
// ErrNotFound is absent. It reads the entities in one Entities call, and
// follows merges (rare) one entity at a time.
func (tx *Tx) ResolveEntities(ctx context.Context, userID string, ids []string) (map[string]Entity, error) {
	found, err := tx.Entities(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Entity, len(found))
	for _, e := range found {
		if !e.Merged() {
			out[e.ID] = e
			continue
		}
		r, err := tx.ResolveEntity(ctx, userID, e.ID)
		switch {
		case err == nil:
			out[e.ID] = r
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

// IsNotFound reports whether err says that something does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
