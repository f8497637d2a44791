package graph

import (
	"context"
	"errors"
	"fmt"
)

// ErrEraseUnsupported means the backend cannot erase graph data (it does
// not implement Eraser).
var ErrEraseUnsupported = errors.New("graph: erasure not supported by this backend")

// Erasure names graph rows to remove for good (issue 37, docs/forgetting.md).
// What it names is deleted, not hidden: no read of any kind, as-of ones
// included, finds it afterwards. Ids that exist for no row are ignored.
type Erasure struct {
	UserID string
	// ObservationIDs are observations to delete.
	ObservationIDs []string
	// EntityIDs are entities to delete with everything stored for them:
	// their rows (with their full-text index entries and text signatures),
	// identifiers, timeline events, raw fragments, and every
	// period of every relationship with an end among them, with that
	// relationship's observations. Their observations are not implied:
	// name them in ObservationIDs (the caller decides which, since a merge
	// moves observations between entities). Their outbox entries stay, so
	// that the entity-embedding worker sees them gone and drops their
	// vectors.
	EntityIDs []string
	// SourceIDs are sources to delete with the raw fragments, timeline
	// events and relationship observations they produced; a relationship
	// left with no observation is deleted in every period. Their entity
	// observations must be named in ObservationIDs (a source cannot outlive
	// its observations).
	SourceIDs []string
}

// ErasedCounts says how many rows of each kind an erasure deleted.
type ErasedCounts struct {
	Observations             int
	RawFragments             int
	Entities                 int
	Identifiers              int
	TimelineEvents           int
	Relationships            int // relationship periods (rows)
	RelationshipObservations int
	Sources                  int
	// Touched are the relationships that lost observations of SourceIDs
	// and may keep others: the caller reduces those that still exist
	// again. Add does not add them.
	Touched []string
}

// Add adds o to c.
func (c *ErasedCounts) Add(o ErasedCounts) {
	c.Observations += o.Observations
	c.RawFragments += o.RawFragments
	c.Entities += o.Entities
	c.Identifiers += o.Identifiers
	c.TimelineEvents += o.TimelineEvents
	c.Relationships += o.Relationships
	c.RelationshipObservations += o.RelationshipObservations
	c.Sources += o.Sources
}

// Eraser is a capability of a DriverTx: it deletes graph rows for good.
// Every driver Cairn ships implements it; Tx.Erase reports
// ErrEraseUnsupported for one that does not.
type Eraser interface {
	// Erase deletes what e names, scoped to e.UserID, and returns how many
	// rows of each kind it deleted. The backend's own indexes (full-text,
	// text signatures) lose the rows' entries in the same transaction.
	Erase(ctx context.Context, e Erasure) (ErasedCounts, error)
}

// Erase is Eraser.Erase on the transaction's driver; it drops what
// PrefetchEntities and the relationship prefetch read.
func (tx *Tx) Erase(ctx context.Context, e Erasure) (ErasedCounts, error) {
	er, ok := tx.DriverTx.(Eraser)
	if !ok {
		return ErasedCounts{}, ErrEraseUnsupported
	}
	tx.read, tx.rels = nil, nil
	n, err := er.Erase(ctx, e)
	if err != nil {
		return ErasedCounts{}, fmt.Errorf("graph: erase: %w", err)
	}
	return n, nil
}

// Compactor is an optional capability of a Driver that keeps files in which
// deleted rows may linger (SQLite's write-ahead log): Compact makes them
// hold nothing erased. Store.Compact does nothing for a driver without it.
type Compactor interface {
	Compact(ctx context.Context) error
}

// Compact runs the driver's Compactor, if it has one.
func (s *Store) Compact(ctx context.Context) error {
	if c, ok := s.d.(Compactor); ok {
		return c.Compact(ctx)
	}
	return nil
}
