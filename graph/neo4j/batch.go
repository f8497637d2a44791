package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/cypher"
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

// insertSourced inserts items, each of which comes from a source, with
// stmt (observations_insert and its kin): one statement per user, in the
// order of items, whose rows are row's maps, settled by insertedAll. An id
// given twice is refused before anything runs (see repeated). key gives an
// item's user, id and source; what names the items in errors.
func insertSourced[T any](ctx context.Context, t *tx, stmt cypher.Statement, what string, items []T,
	key func(T) (userID, id, sourceID string), row func(T) (map[string]any, error)) error {
	ids := make([]string, len(items))
	for i, x := range items {
		_, ids[i], _ = key(x)
	}
	if id, ok := repeated(ids); ok {
		return fmt.Errorf("graph/neo4j: insert %ss: %s given twice: %w", what, id, graph.ErrConflict)
	}
	for _, group := range groupBy(items, func(x T) string { u, _, _ := key(x); return u }) {
		userID, _, _ := key(group[0])
		if err := t.enter(ctx, userID); err != nil {
			return err
		}
		rows := make([]any, len(group))
		ids, sources := make([]string, len(group)), make([]string, len(group))
		for i, x := range group {
			r, err := row(x)
			if err != nil {
				return err
			}
			rows[i] = r
			_, ids[i], sources[i] = key(x)
		}
		recs, err := t.run(ctx, stmt, cypher.Fill{}, map[string]any{"userId": userID, "rows": rows})
		if err != nil {
			return err
		}
		n, err := written(recs, stmt.Name())
		if err != nil {
			return err
		}
		if err := t.insertedAll(ctx, n, what, userID, ids, sources); err != nil {
			return err
		}
	}
	return nil
}
