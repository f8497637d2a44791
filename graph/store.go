package graph

import (
	"context"
	"errors"
	"fmt"
)

// Store is the portable graph that the rest of Cairn uses. It wraps a Driver
// and adds the rules every backend must obey.
type Store struct {
	d Driver
}

// NewStore returns a Store over d. The Store owns d: Close closes it.
func NewStore(d Driver) *Store { return &Store{d: d} }

// Tx is one transaction on the graph: the driver's primitives, plus the
// operations whose rules live in this package (CreateRelationship,
// Traverse, ShortestPath).
type Tx struct {
	DriverTx
}

// Update runs fn in one read-write transaction. fn may be retried and must
// have no side effects outside the transaction.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	return s.d.Update(ctx, func(dt DriverTx) error { return fn(&Tx{DriverTx: dt}) })
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

// IsNotFound reports whether err says that something does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
