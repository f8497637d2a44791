// Package byid puts what a graph driver read for a list of ids (Entities,
// ObservationsByID, Relationships and their kin) back in the order the
// caller gave the ids, as graph.DriverTx asks of those reads.
package byid

import (
	"slices"
	"time"
)

// InOrder returns found in the order of ids, each id once, at its first
// place; ids that found nothing are left out. Where found holds an id more
// than once, the later one is kept (see Newest).
func InOrder[T any](ids []string, found []T, id func(T) string) []T {
	byID := make(map[string]T, len(found))
	for _, x := range found {
		byID[id(x)] = x
	}
	out := make([]T, 0, len(byID))
	for _, k := range ids {
		if x, ok := byID[k]; ok {
			out = append(out, x)
			delete(byID, k)
		}
	}
	return out
}

// Newest is InOrder keeping, of the items found for an id, the one whose at
// is latest: the newest period of each relationship, say.
func Newest[T any](ids []string, found []T, id func(T) string, at func(T) time.Time) []T {
	sorted := slices.Clone(found)
	slices.SortStableFunc(sorted, func(a, b T) int { return at(a).Compare(at(b)) })
	return InOrder(ids, sorted, id)
}
