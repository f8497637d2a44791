package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	entityTotal         = cypher.Must("entity_total")
	reachHopsDirected   = cypher.Must("reach_hops_directed")
	reachHopsUndirected = cypher.Must("reach_hops_undirected")
	reachCanonical      = cypher.Must("reach_canonical")
	reachLevel          = cypher.Must("reach_level")
)

// Reach implements graph.Reacher in at most three steps.
//
// The first answers whether q.To can be reached at all, in one round trip:
// Neo4j's shortestPath over the live edges of q.Types (reach_hops_*),
// bounded by the number of the user's entities, which no shortest path is
// longer than, so the search is exhaustive and every variable-length
// pattern still has an upper bound. That is the whole cost of the common
// case, an edge that closes no cycle.
//
// When q.To is reachable, the path Neo4j found is a shortest one, but
// perhaps not the one Tx.ShortestPath returns: among shortest paths, that
// one gives each entity the lowest-id entity of the previous breadth-first
// level with an edge to it. For a directed query, reach_canonical checks in
// one round trip whether some entity would be a better predecessor
// somewhere along Neo4j's path; most often (a chain, a tree: a cycle check
// that refuses an edge) none would, and the path is the answer.
//
// Otherwise, and for undirected queries, a breadth-first search runs, one
// reach_level call per level, which gives each newly reached entity the
// lowest-id entity of the previous level with an edge to it; unwinding
// those parents from q.To gives the path. A user with more entities than
// cypher.MaxHopsLimit skips the first two steps: the search alone is
// exhaustive too.
func (t *tx) Reach(ctx context.Context, q graph.PathQuery) ([]string, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if q.From == q.To {
		return []string{q.From}, nil
	}
	if q.Types != nil && len(q.Types) == 0 {
		return nil, nil
	}
	total, err := t.entityTotal(ctx, q.UserID)
	if err != nil || total < 2 {
		return nil, err
	}
	if total > cypher.MaxHopsLimit {
		return t.breadthFirst(ctx, q)
	}
	path, err := t.shortestPath(ctx, q, total)
	if err != nil || path == nil {
		return nil, err
	}
	if q.Direction == graph.Outbound || q.Direction == graph.Inbound {
		canonical, err := t.canonical(ctx, q, path, total)
		if err != nil {
			return nil, err
		}
		if canonical {
			return path, nil
		}
	}
	return t.breadthFirst(ctx, q)
}

// entityTotal counts the user's entities, which no shortest path is longer
// than, once per transaction until it writes an entity.
func (t *tx) entityTotal(ctx context.Context, userID string) (int, error) {
	if total, ok := t.totals[userID]; ok {
		return total, nil
	}
	rows, err := t.run(ctx, entityTotal, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("graph/neo4j: entity_total returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	total := r.int("total")
	if r.err != nil {
		return 0, r.err
	}
	if t.totals == nil {
		t.totals = map[string]int{}
	}
	t.totals[userID] = total
	return total, nil
}

// hopsBound is the upper bound of a shortest-path pattern for a user with
// total entities: no shortest path has more than total-1 hops. It is
// rounded up to a power of two (at most cypher.MaxHopsLimit), so that the
// statement's text, which Neo4j caches its plan by, changes only when the
// user's entities double.
func hopsBound(total int) int {
	b := 1
	for b < total-1 {
		b *= 2
	}
	return min(b, cypher.MaxHopsLimit)
}

// shortestPath runs reach_hops_*: the entity ids of a shortest path from
// q.From to q.To that Neo4j chose, or nil when there is none.
func (t *tx) shortestPath(ctx context.Context, q graph.PathQuery, total int) ([]string, error) {
	st, from, to := reachHopsDirected, q.From, q.To
	switch q.Direction {
	case graph.Inbound:
		from, to = to, from
	case graph.Outbound:
	default:
		st = reachHopsUndirected
	}
	rows, err := t.run(ctx, st, cypher.Fill{MaxHops: hopsBound(total)}, map[string]any{
		"userId": q.UserID, "from": from, "to": to, "types": nullList(q.Types), "at": nullTime(q.At),
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := record{m: rows[0]}
	path := r.strings("path")
	if r.err != nil {
		return nil, r.err
	}
	if len(path) < 2 || slices.Contains(path, "") {
		// A path joins two entities through entities only (any other node
		// has no id): anything else is not a path the search would take.
		return nil, fmt.Errorf("graph/neo4j: %s returned the path %q", st.Name(), path)
	}
	if q.Direction == graph.Inbound {
		slices.Reverse(path)
	}
	return path, nil
}

// canonical runs reach_canonical: whether path (from q.From, in the
// direction of the search) is the shortest path Tx.ShortestPath returns.
func (t *tx) canonical(ctx context.Context, q graph.PathQuery, path []string, total int) (bool, error) {
	rows, err := t.run(ctx, reachCanonical, cypher.Fill{MaxHops: hopsBound(total)}, map[string]any{
		"userId": q.UserID, "path": path, "reversed": q.Direction == graph.Inbound,
		"types": nullList(q.Types), "at": nullTime(q.At),
	})
	if err != nil {
		return false, err
	}
	if len(rows) != 1 {
		return false, fmt.Errorf("graph/neo4j: reach_canonical returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	closer := r.int("closer")
	return closer == 0, r.err
}

// breadthFirst runs reach_level from q.From until q.To is reached or a
// level reaches nothing new.
func (t *tx) breadthFirst(ctx context.Context, q graph.PathQuery) ([]string, error) {
	parent := map[string]string{q.From: ""}
	seen := []string{q.From}
	frontier := []string{q.From}
	for len(frontier) > 0 {
		rows, err := t.run(ctx, reachLevel, cypher.Fill{}, map[string]any{
			"userId": q.UserID, "frontier": frontier, "seen": seen, "direction": direction(q.Direction),
			"types": nullList(q.Types), "at": nullTime(q.At),
		})
		if err != nil {
			return nil, err
		}
		var next []string
		for _, row := range rows {
			r := record{m: row}
			id, p := r.str("id"), r.str("parent")
			if r.err != nil {
				return nil, r.err
			}
			if _, ok := parent[id]; ok {
				continue
			}
			parent[id] = p
			next = append(next, id)
		}
		if _, ok := parent[q.To]; ok {
			return unwind(parent, q.To), nil
		}
		slices.Sort(next)
		seen = append(seen, next...)
		frontier = next
	}
	return nil, nil
}

// unwind follows parents from to back to the start (whose parent is "").
func unwind(parent map[string]string, to string) []string {
	var path []string
	for n := to; n != ""; n = parent[n] {
		path = append(path, n)
		if len(path) > len(parent) {
			return nil
		}
	}
	slices.Reverse(path)
	return path
}
