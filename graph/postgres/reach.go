package postgres

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/graph"
)

// Reach implements graph.Reacher with two recursive queries.
//
// The first answers whether q.To can be reached at all: a recursive CTE
// whose UNION keeps each entity once, so it follows every edge at most once,
// and which PostgreSQL stops evaluating as soon as EXISTS finds q.To. That is
// the whole cost of the common case, an edge that closes no cycle: one round
// trip, where Tx.ShortestPath makes one per hop.
//
// Only when q.To is reachable does the second run: a breadth-first search
// with one row per level, holding the entities first reached at that level
// and, for each, the lowest-id entity of the previous level with an edge to
// it (the set of entities seen so far is a JSONB object, whose key lookup is
// a binary search). Unwinding those parents from q.To gives the path
// Tx.ShortestPath returns.
//
// Every step looks up the edges of one entity through a LATERAL subquery
// fenced with OFFSET 0, which keeps the planner on the (user, entity, type)
// indexes whatever its row estimates: left free, it may scan all of a user's
// edges once per step.
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
	a := args{q.UserID, q.From, q.To}
	filter := "r.user_id = $1 AND " + liveAt(q.At, &a)
	if q.Types != nil {
		filter += " AND r.relationship_type = ANY(" + a.add(q.Types) + ")"
	}

	var reachable bool
	if err := t.tx.QueryRow(ctx, `WITH RECURSIVE reach(node) AS (
		  SELECT $2::text COLLATE "C"
		  UNION
		  SELECT s.b FROM reach CROSS JOIN LATERAL `+neighbours(q.Direction, "reach.node", filter)+` AS s
		)
		SELECT EXISTS (SELECT 1 FROM reach WHERE node = $3)`, a...).Scan(&reachable); err != nil {
		return nil, wrap("reach", err)
	}
	if !reachable {
		return nil, nil
	}

	rows, err := t.tx.Query(ctx, `WITH RECURSIVE bfs(depth, frontier, parents, seen) AS (
		  SELECT 0, ARRAY[$2::text COLLATE "C"], ARRAY[''::text COLLATE "C"], jsonb_build_object($2::text, 0)
		  UNION ALL
		  SELECT b.depth + 1, nxt.ids, nxt.parents, b.seen || nxt.seen
		  FROM bfs b CROSS JOIN LATERAL (
		    SELECT array_agg(x.b ORDER BY x.b) AS ids, array_agg(x.p ORDER BY x.b) AS parents,
		      jsonb_object_agg(x.b, b.depth + 1) AS seen
		    FROM (
		      SELECT s.b, min(f.a) AS p
		      FROM unnest(b.frontier) AS f(a) CROSS JOIN LATERAL `+neighbours(q.Direction, "f.a", filter)+` AS s
		      WHERE NOT b.seen ? s.b
		      GROUP BY s.b
		    ) x
		  ) nxt
		  WHERE nxt.ids IS NOT NULL AND NOT $3 = ANY(b.frontier)
		)
		SELECT frontier, parents FROM bfs WHERE depth > 0`, a...)
	if err != nil {
		return nil, wrap("shortest path", err)
	}
	defer rows.Close()
	parent := map[string]string{}
	for rows.Next() {
		var ids, parents []string
		if err := rows.Scan(&ids, &parents); err != nil {
			return nil, wrap("shortest path", err)
		}
		for i, id := range ids {
			parent[id] = parents[i]
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("shortest path", err)
	}
	if _, ok := parent[q.To]; !ok {
		return nil, nil
	}
	path := []string{q.To}
	for n := q.To; n != q.From; {
		p, ok := parent[n]
		if !ok || len(path) > len(parent) {
			return nil, fmt.Errorf("graph/postgres: shortest path: no way back from %s to %s", n, q.From)
		}
		path, n = append(path, p), p
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

// neighbours returns a subquery, for a LATERAL join, of the entities one
// step away from the entity expression from in direction d, over the edges
// that filter (on alias r) keeps, in column b.
func neighbours(d graph.Direction, from, filter string) string {
	out := "SELECT r.target_entity_id AS b FROM relationships r WHERE " + filter + " AND r.source_entity_id = " + from
	in := "SELECT r.source_entity_id AS b FROM relationships r WHERE " + filter + " AND r.target_entity_id = " + from
	switch d {
	case graph.Outbound:
		return "(" + out + " OFFSET 0)"
	case graph.Inbound:
		return "(" + in + " OFFSET 0)"
	default:
		return "(SELECT u.b FROM (" + out + " UNION ALL " + in + ") AS u OFFSET 0)"
	}
}
