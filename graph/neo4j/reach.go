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
	reachLevel          = cypher.Must("reach_level")
)

// Reach implements graph.Reacher in two steps.
//
// The first answers whether q.To can be reached at all, in one round trip:
// Neo4j's shortestPath over the live edges of q.Types (reach_hops_*),
// bounded by the number of the user's entities, which no shortest path is
// longer than, so the search is exhaustive and every variable-length
// pattern still has an upper bound. That is the whole cost of the common
// case, an edge that closes no cycle.
//
// Only when q.To is reachable does the second run: a breadth-first search,
// one reach_level call per level, which gives each newly reached entity
// the lowest-id entity of the previous level with an edge to it; unwinding
// those parents from q.To gives the path Tx.ShortestPath returns (Neo4j's
// own choice among shortest paths may differ). A user with more entities
// than cypher.MaxHopsLimit skips the first step: the search alone is
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
	reachable, err := t.reachable(ctx, q)
	if err != nil || !reachable {
		return nil, err
	}
	return t.breadthFirst(ctx, q)
}

// reachable runs reach_hops_*; it reports true, without asking, when the
// user has too many entities for the bound.
func (t *tx) reachable(ctx context.Context, q graph.PathQuery) (bool, error) {
	rows, err := t.run(ctx, entityTotal, cypher.Fill{}, map[string]any{"userId": q.UserID})
	if err != nil {
		return false, err
	}
	if len(rows) != 1 {
		return false, fmt.Errorf("graph/neo4j: entity_total returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	total := r.int("total")
	if r.err != nil {
		return false, r.err
	}
	if total < 2 {
		return false, nil
	}
	if total > cypher.MaxHopsLimit {
		return true, nil
	}
	st, from, to := reachHopsDirected, q.From, q.To
	switch q.Direction {
	case graph.Inbound:
		from, to = to, from
	case graph.Outbound:
	default:
		st = reachHopsUndirected
	}
	rows, err = t.run(ctx, st, cypher.Fill{MaxHops: total - 1}, map[string]any{
		"userId": q.UserID, "from": from, "to": to, "types": nullList(q.Types), "at": nullTime(q.At),
	})
	return len(rows) > 0, err
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
