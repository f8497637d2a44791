package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/graph"
)

// groupBy splits xs into the runs that share key, each run in the order of
// xs, the runs in the order their first element comes: one statement per
// user (or per user and label) of a batch, in a fixed order.
func groupBy[T any, K comparable](xs []T, key func(T) K) [][]T {
	var out [][]T
	at := map[K]int{}
	for _, x := range xs {
		k := key(x)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], x)
	}
	return out
}

// repeated returns an id that ids holds twice, if any. The rows of one
// UNWIND do not see the nodes the earlier rows created, so a batch that
// inserts an id twice must be refused before it runs: Neo4j's uniqueness
// constraint would fail the statement, and with it the transaction.
func repeated(ids []string) (string, bool) {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return id, true
		}
		seen[id] = true
	}
	return "", false
}

// distinct returns ids without repeats, in the order of their first place.
func distinct(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// written reads the count that a bulk write returns as its one record.
func written(rows []map[string]any, name string) (int, error) {
	if len(rows) != 1 {
		return 0, fmt.Errorf("graph/neo4j: %s returned %d rows, want 1", name, len(rows))
	}
	r := record{m: rows[0]}
	n := r.int("written")
	return n, r.err
}

// insertedAll settles a bulk insert of ids (with their sources, in the same
// order) that wrote n of them. observations_insert and raw_fragments_insert
// skip a row whose id exists (graph.ErrConflict) or whose source is not
// one of the user's (a *graph.NotFoundError naming it, as the one-row
// insert gives), which source_get tells apart. Which rows were written is
// then unknown, as graph.DriverTx allows: the caller does not commit.
func (t *tx) insertedAll(ctx context.Context, n int, what, userID string, ids, sourceIDs []string) error {
	if n == len(ids) {
		return nil
	}
	for _, src := range distinct(sourceIDs) {
		if _, err := t.Source(ctx, userID, src); err != nil {
			return fmt.Errorf("graph/neo4j: insert %s %s: %w", what, ids[slices.Index(sourceIDs, src)], err)
		}
	}
	if len(ids) == 1 {
		return conflict(what, ids[0])
	}
	return fmt.Errorf("graph/neo4j: insert %ss: %d of %d ids exist already (from %s): %w", what, len(ids)-n, len(ids), ids[0], graph.ErrConflict)
}

// inOrderOf returns the found items in the order of ids, each once, at its
// id's first place; ids that found nothing are left out.
func inOrderOf[T any](ids []string, found []T, id func(T) string) []T {
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
