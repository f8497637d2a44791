package graph

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Exporter is an optional capability of a DriverTx: reading back every row
// of a user, in an order that does not change between calls, a page at a
// time, so that `cairn export` can copy a store with its history (sources,
// merged entities, identifiers, ended relationship periods, raw fragments)
// in memory bounded by the page size, and `cairn import` can tell what a
// store holds already. Every paged method returns up to limit rows that
// come strictly after the key it is given, in its order; an empty key
// starts at the beginning, and fewer rows than limit means the end. Like
// every DriverTx method, each is scoped to its user.
//
// The embedded, PostgreSQL and Neo4j drivers implement it; a driver
// without it cannot be exported from or imported into.
type Exporter interface {
	// SourcesAfter returns the user's sources with an id above after,
	// ordered by id.
	SourcesAfter(ctx context.Context, userID, after string, limit int) ([]Source, error)
	// EntitiesAfter returns the user's entities, merged or not, with an id
	// above after, ordered by id.
	EntitiesAfter(ctx context.Context, userID, after string, limit int) ([]Entity, error)
	// EntitiesIdentifiers returns the identifiers of those of the entities
	// that have some, ordered by entity id, each entity's identifiers by
	// field, then value.
	EntitiesIdentifiers(ctx context.Context, userID string, entityIDs []string) ([]EntityIdentifiers, error)
	// EntitiesTimelines returns the timeline events of those of the
	// entities that have some, ordered by entity id, each entity's events
	// by id.
	EntitiesTimelines(ctx context.Context, userID string, entityIDs []string) ([]EntityTimeline, error)
	// RawFragmentsAfter returns the user's raw fragments with an id above
	// after, ordered by id.
	RawFragmentsAfter(ctx context.Context, userID, after string, limit int) ([]RawFragment, error)
	// RawFragmentsByID returns the user's raw fragments with these ids
	// that exist, in the order of ids, each once.
	RawFragmentsByID(ctx context.Context, userID string, ids []string) ([]RawFragment, error)
	// RelationshipPeriodsAfter returns every period of the user's
	// relationships, live or ended, that comes after the key in the order
	// of id, then CreatedAt: what ListRelationships, which answers for one
	// time, cannot list.
	RelationshipPeriodsAfter(ctx context.Context, userID string, after PeriodKey, limit int) ([]Relationship, error)
}

// PeriodKey names one period of a relationship: its id and when the period
// began. The zero key comes before every period.
type PeriodKey struct {
	ID        string
	CreatedAt time.Time
}

// Key returns the key of r's period.
func (r Relationship) Key() PeriodKey { return PeriodKey{ID: r.ID, CreatedAt: r.CreatedAt} }

// Before reports whether k comes before o in the order of
// RelationshipPeriodsAfter.
func (k PeriodKey) Before(o PeriodKey) bool {
	if k.ID != o.ID {
		return k.ID < o.ID
	}
	return k.CreatedAt.Before(o.CreatedAt)
}

// SortEntityIdentifiers returns byEntity as Exporter.EntitiesIdentifiers
// orders it, for drivers that gather identifiers in a map.
func SortEntityIdentifiers(byEntity map[string][]Identifier) []EntityIdentifiers {
	out := make([]EntityIdentifiers, 0, len(byEntity))
	for id, idents := range byEntity {
		slices.SortFunc(idents, func(a, b Identifier) int {
			return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Value, b.Value))
		})
		out = append(out, EntityIdentifiers{EntityID: id, Identifiers: idents})
	}
	slices.SortFunc(out, func(a, b EntityIdentifiers) int { return cmp.Compare(a.EntityID, b.EntityID) })
	return out
}

// SortEntityTimelines returns byEntity as Exporter.EntitiesTimelines orders
// it, for drivers that gather events in a map.
func SortEntityTimelines(byEntity map[string][]TimelineEvent) []EntityTimeline {
	out := make([]EntityTimeline, 0, len(byEntity))
	for id, events := range byEntity {
		slices.SortFunc(events, func(a, b TimelineEvent) int { return cmp.Compare(a.ID, b.ID) })
		out = append(out, EntityTimeline{EntityID: id, Events: events})
	}
	slices.SortFunc(out, func(a, b EntityTimeline) int { return cmp.Compare(a.EntityID, b.EntityID) })
	return out
}

// InOrderOf returns the values of found in the order of ids, each once,
// leaving out ids it lacks.
func InOrderOf[T any](ids []string, found map[string]T) []T {
	out := make([]T, 0, len(found))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if v, ok := found[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, v)
		}
	}
	return out
}
