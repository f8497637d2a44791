package knowledge

import (
	"context"
	"sync"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// What the graph's write transactions changed (graph/changes.go), for those
// who watch it: MCP resource subscriptions. The methods here are not
// consent-filtered: they say what changed, for the watcher to decide,
// subscriber by subscriber, who may be told. Nothing they return is ever
// shown to a caller as such.

// changeWatchers fan the graph's in-process change hook out to every
// watcher.
type changeWatchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func([]graph.Change)
}

// WatchChanges calls fn with what each of this process's committed write
// transactions changed, until stop is called. fn must not block.
func (s *Service) WatchChanges(fn func([]graph.Change)) (stop func()) {
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func([]graph.Change){}
		s.graph.OnChange(func(cs []graph.Change) {
			w.mu.Lock()
			defer w.mu.Unlock()
			for _, f := range w.fns {
				f(cs)
			}
		})
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns, id)
	}
}

// HasChangeLog reports whether the graph logs its changes for every
// process on its database (graph.Store.HasChangeLog); without a log only
// WatchChanges tells them, in this process.
func (s *Service) HasChangeLog() bool { return s.graph.HasChangeLog() }

// Changes returns up to limit logged changes after the cursor after.
func (s *Service) Changes(ctx context.Context, after int64, limit int) ([]graph.Change, error) {
	return s.graph.Changes(ctx, after, limit)
}

// LastChange returns the change log's cursor now.
func (s *Service) LastChange(ctx context.Context) (int64, error) { return s.graph.LastChange(ctx) }

// PruneChanges deletes the changes logged before t.
func (s *Service) PruneChanges(ctx context.Context, before time.Time) error {
	return s.graph.PruneChanges(ctx, before)
}

// EntityTypesOf returns the types of the entities with these ids, by id;
// an id that names no entity is absent.
func (s *Service) EntityTypesOf(ctx context.Context, userID string, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		es, err := tx.Entities(ctx, userID, ids)
		for _, e := range es {
			out[e.ID] = e.Type
		}
		return err
	})
	return out, err
}

// CountEntitiesOfType counts the user's live entities of a type.
func (s *Service) CountEntitiesOfType(ctx context.Context, userID, typ string) (int, error) {
	var n int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		_, n, err = tx.ListEntities(ctx, graph.EntityFilter{UserID: userID, Types: []string{typ}, Page: graph.Page{Limit: 1}})
		return err
	})
	return n, err
}

// CountTimelineEvents counts the user's timeline events in [from, to),
// of one entity when entityID is set.
func (s *Service) CountTimelineEvents(ctx context.Context, userID, entityID string, from, to time.Time) (int, error) {
	var n int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		_, n, err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{
			UserID: userID, EntityID: entityID, After: from.Add(-time.Microsecond), Before: to, Page: graph.Page{Limit: 1},
		})
		return err
	})
	return n, err
}

// UserEntityTypes returns the types the user has entities of.
func (s *Service) UserEntityTypes(ctx context.Context, userID string) ([]string, error) {
	var out []string
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		out, err = tx.EntityTypes(ctx, userID)
		return err
	})
	return out, err
}
