package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	// onChange is called with what a write transaction changed, after it
	// commits (changes.go).
	onChange atomic.Pointer[func([]Change)]
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
	// read holds the entities PrefetchEntities read, for Entity, until the
	// transaction writes an entity.
	read map[entityKey]Entity
	// rels holds what prefetchRelationships read (and what the transaction
	// wrote since) of the relationships CreateRelationships will look up.
	rels map[entityKey]knownRelationship
	// changes are what the transaction changed, in the order first
	// changed; changeSet holds them for deduplication (changes.go).
	changes   []Change
	changeSet map[Change]bool
}

type entityKey struct{ user, id string }

// PrefetchEntities reads the entities with these ids in one Entities call
// and answers the transaction's next Entity calls for them from it, until
// the transaction writes an entity (PutEntity, PutEntities,
// MoveObservations): what a batch that reads the same entities again and
// again needs (CreateRelationships checks and resolves both endpoints of
// every relationship), at the cost of one query instead of one per read.
// Ids that name no entity are left to Entity, which reports them.
func (tx *Tx) PrefetchEntities(ctx context.Context, userID string, ids []string) error {
	found, err := tx.DriverTx.Entities(ctx, userID, ids)
	if err != nil {
		return err
	}
	if tx.read == nil {
		tx.read = make(map[entityKey]Entity, len(found))
	}
	for _, e := range found {
		tx.read[entityKey{userID, e.ID}] = e
	}
	return nil
}

// Entity is DriverTx.Entity, answered from what PrefetchEntities read when
// it holds the entity. The entity's maps are the caller's own, as a
// driver's are.
func (tx *Tx) Entity(ctx context.Context, userID, id string) (Entity, error) {
	if e, ok := tx.read[entityKey{userID, id}]; ok {
		e.Snapshot, e.Provenance = maps.Clone(e.Snapshot), maps.Clone(e.Provenance)
		return e, nil
	}
	return tx.DriverTx.Entity(ctx, userID, id)
}

// PutEntity is DriverTx.PutEntity; it drops what PrefetchEntities read.
func (tx *Tx) PutEntity(ctx context.Context, e Entity) error {
	tx.read = nil
	if err := tx.DriverTx.PutEntity(ctx, e); err != nil {
		return err
	}
	tx.entitiesChanged(e)
	return nil
}

// PutEntities is DriverTx.PutEntities; it drops what PrefetchEntities read.
func (tx *Tx) PutEntities(ctx context.Context, es []Entity) error {
	tx.read = nil
	if err := tx.DriverTx.PutEntities(ctx, es); err != nil {
		return err
	}
	tx.entitiesChanged(es...)
	return nil
}

// MoveObservations is DriverTx.MoveObservations (part of a merge); it
// drops what PrefetchEntities read.
func (tx *Tx) MoveObservations(ctx context.Context, userID, from, to string) (int, error) {
	tx.read = nil
	return tx.DriverTx.MoveObservations(ctx, userID, from, to)
}

// Update runs fn in one read-write transaction. fn may be retried and must
// have no side effects outside the transaction. What fn changed is logged
// in the same transaction (changes.go) and told to the OnChange function
// once it commits.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	enqueued := false
	var changes []Change
	err := s.d.Update(ctx, func(dt DriverTx) error {
		tx := &Tx{DriverTx: dt}
		err := fn(tx)
		if err == nil {
			err = tx.logChanges(ctx)
		}
		enqueued, changes = tx.enqueued, tx.changes
		return err
	})
	if err == nil && enqueued {
		if f := s.onOutbox.Load(); f != nil {
			(*f)()
		}
	}
	if err == nil && len(changes) > 0 {
		if f := s.onChange.Load(); f != nil {
			(*f)(changes)
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
