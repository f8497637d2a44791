package graph

import (
	"context"
	"fmt"
	"time"
)

// Changes say what a write transaction changed, for readers that watch the
// graph (MCP resource subscriptions): an entity's snapshot, the
// relationships at an entity, or an entity's timeline events in a month.
// Tx collects them from its writes (PutEntity, PutEntities,
// PutRelationship, PutRelationships, ReplaceTimelineEvents,
// ReplaceEntityTimelines). After the transaction commits, Store tells the
// function OnChange set, in this process. A driver that also keeps a
// change log (ChangeLogTx, ChangeLog) writes them in the same transaction,
// so that other processes on the same database learn of them too
// (Store.Changes).

// ChangeKind is what part of an entity changed.
type ChangeKind string

// The kinds of change.
const (
	// ChangeEntity: the entity's snapshot (and its observations).
	ChangeEntity ChangeKind = "entity"
	// ChangeRelationships: a relationship at the entity, either end.
	ChangeRelationships ChangeKind = "relationships"
	// ChangeTimeline: the entity's timeline events of Change.Period.
	ChangeTimeline ChangeKind = "timeline"
)

// Change is one thing a transaction changed.
type Change struct {
	// Seq is the change's place in the change log; zero for a change told
	// in-process before any log has it.
	Seq      int64
	UserID   string
	EntityID string
	// EntityType is the entity's type; empty for ChangeRelationships,
	// whose writes do not carry it.
	EntityType string
	Kind       ChangeKind
	// RelatedID is, for ChangeRelationships, the entity at the
	// relationship's other end.
	RelatedID string
	// Period is the month (2026-03) of a ChangeTimeline.
	Period string
	// At is when the change was logged; zero for a change told in-process.
	At time.Time
}

// ChangeLogTx is an optional capability of a DriverTx: writing changes to
// the driver's change log in the transaction. Logged changes must be read
// by ChangeLog.Changes in the order their transactions committed, so that
// a reader's cursor never passes a change that commits later.
type ChangeLogTx interface {
	AppendChanges(ctx context.Context, changes []Change, at time.Time) error
}

// ChangeLog is an optional capability of a Driver: reading and pruning the
// change log that its ChangeLogTx writes.
type ChangeLog interface {
	// Changes returns the logged changes whose Seq is greater than after,
	// in Seq order, at most limit.
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// LastChange returns the greatest Seq logged, 0 when none is.
	LastChange(ctx context.Context) (int64, error)
	// PruneChanges deletes the changes logged before t.
	PruneChanges(ctx context.Context, before time.Time) error
}

// OnChange sets a function that Update calls with what each committed
// transaction changed, in this process. fn must not block; nil removes it.
func (s *Store) OnChange(fn func([]Change)) {
	if fn == nil {
		s.onChange.Store(nil)
		return
	}
	s.onChange.Store(&fn)
}

// HasChangeLog reports whether the driver keeps a change log, which other
// processes write to as well.
func (s *Store) HasChangeLog() bool {
	_, ok := s.d.(ChangeLog)
	return ok
}

// Changes returns up to limit logged changes after the cursor after (see
// ChangeLog); without a change log it returns nothing.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]Change, error) {
	cl, ok := s.d.(ChangeLog)
	if !ok {
		return nil, nil
	}
	out, err := cl.Changes(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("graph: changes: %w", err)
	}
	return out, nil
}

// LastChange returns the change log's last Seq (see ChangeLog), 0 without
// a change log.
func (s *Store) LastChange(ctx context.Context) (int64, error) {
	cl, ok := s.d.(ChangeLog)
	if !ok {
		return 0, nil
	}
	n, err := cl.LastChange(ctx)
	if err != nil {
		return 0, fmt.Errorf("graph: last change: %w", err)
	}
	return n, nil
}

// PruneChanges deletes the changes logged before t (see ChangeLog).
func (s *Store) PruneChanges(ctx context.Context, before time.Time) error {
	cl, ok := s.d.(ChangeLog)
	if !ok {
		return nil
	}
	if err := cl.PruneChanges(ctx, before); err != nil {
		return fmt.Errorf("graph: prune changes: %w", err)
	}
	return nil
}

// changed records a change of the transaction, once.
func (tx *Tx) changed(c Change) {
	if tx.changeSet == nil {
		tx.changeSet = map[Change]bool{}
	}
	if !tx.changeSet[c] {
		tx.changeSet[c] = true
		tx.changes = append(tx.changes, c)
	}
}

func (tx *Tx) entitiesChanged(es ...Entity) {
	for _, e := range es {
		tx.changed(Change{UserID: e.UserID, EntityID: e.ID, EntityType: e.Type, Kind: ChangeEntity})
	}
}

func (tx *Tx) relationshipsChanged(rs ...Relationship) {
	for _, r := range rs {
		tx.changed(Change{UserID: r.UserID, EntityID: r.SourceEntityID, RelatedID: r.TargetEntityID, Kind: ChangeRelationships})
		tx.changed(Change{UserID: r.UserID, EntityID: r.TargetEntityID, RelatedID: r.SourceEntityID, Kind: ChangeRelationships})
	}
}

// timelineChanged records the months of events as changed for the entity;
// the months of the events they replaced are not known, so an entity whose
// dates moved says so for its new months only.
func (tx *Tx) timelineChanged(userID, entityID string, events []TimelineEvent) {
	for _, ev := range events {
		if !ev.Time.IsZero() {
			tx.changed(Change{UserID: userID, EntityID: entityID, Kind: ChangeTimeline, Period: ev.Time.UTC().Format("2006-01")})
		}
	}
}

// ReplaceTimelineEvents is DriverTx.ReplaceTimelineEvents; it records the
// change.
func (tx *Tx) ReplaceTimelineEvents(ctx context.Context, userID, entityID string, events []TimelineEvent) error {
	if err := tx.DriverTx.ReplaceTimelineEvents(ctx, userID, entityID, events); err != nil {
		return err
	}
	tx.timelineChanged(userID, entityID, events)
	return nil
}

// ReplaceEntityTimelines is DriverTx.ReplaceEntityTimelines; it records the
// changes.
func (tx *Tx) ReplaceEntityTimelines(ctx context.Context, userID string, timelines []EntityTimeline) error {
	if err := tx.DriverTx.ReplaceEntityTimelines(ctx, userID, timelines); err != nil {
		return err
	}
	for _, t := range timelines {
		tx.timelineChanged(userID, t.EntityID, t.Events)
	}
	return nil
}

// logChanges writes the transaction's changes to the driver's change log,
// when it keeps one.
func (tx *Tx) logChanges(ctx context.Context) error {
	cl, ok := tx.DriverTx.(ChangeLogTx)
	if !ok || len(tx.changes) == 0 {
		return nil
	}
	return cl.AppendChanges(ctx, tx.changes, Now())
}
