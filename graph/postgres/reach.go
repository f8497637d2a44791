package postgres

import (
	"context"

	"github.com/cairnkg/cairn/graph"
)

// Reach implements graph.Reacher with two recursive queries.
//
// The first answers whether q.To can be reached at all: a recursive CTE
// whose UNION keeps each entity once, so it walks every edge at most once,
// and which PostgreSQL stops evaluating as soon as EXISTS finds q.To. That
// is the whole cost of the common case, an edge that closes no cycle: one
// round trip, where Tx.ShortestPath makes one per hop.
//
// Only when q.To is reachable does the second run: a breadth-first search,
// one row per level (the entities first reached at that level, and every
// entity seen so far), then a walk back from q.To that picks at each level
// the lowest-id entity with an edge to the next one, which is the path
// Tx.ShortestPath returns.
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

	walk := stepsFrom(q.Direction, "= reach.node", filter)
	var reachable bool
	if err := t.tx.QueryRow(ctx, `WITH RECURSIVE reach(node) AS (
		  SELECT $2::text COLLATE "C"
		  UNION
		  SELECT `+walk.to+` FROM reach `+walk.from+`
		)
		SELECT EXISTS (SELECT 1 FROM reach WHERE node = $3)`, a...).Scan(&reachable); err != nil {
		return nil, wrap("reach", err)
	}
	if !reachable {
		return nil, nil
	}

	level := stepsFrom(q.Direction, "= ANY(b.frontier)", filter)
	back := stepsFrom(q.Direction, "= ANY(l.frontier)", filter)
	var path []string
	err := t.tx.QueryRow(ctx, `WITH RECURSIVE bfs(depth, frontier, seen) AS (
		  SELECT 0, ARRAY[$2::text COLLATE "C"], ARRAY[$2::text COLLATE "C"]
		  UNION ALL
		  SELECT b.depth + 1, nxt.ids, b.seen || nxt.ids
		  FROM bfs b CROSS JOIN LATERAL (
		    SELECT array_agg(DISTINCT `+level.to+`) AS ids FROM (SELECT) AS one `+level.from+`
		    AND NOT `+level.to+` = ANY(b.seen)
		  ) nxt
		  WHERE nxt.ids IS NOT NULL AND NOT $3 = ANY(b.frontier)
		), back(node, depth) AS (
		  SELECT $3::text COLLATE "C", depth FROM bfs WHERE $3 = ANY(frontier)
		  UNION ALL
		  SELECT (SELECT min(`+back.at+`) FROM bfs l `+back.from+`
		          AND l.depth = b.depth - 1 AND `+back.to+` = b.node), b.depth - 1
		  FROM back b WHERE b.depth > 0
		)
		SELECT array_agg(node ORDER BY depth) FROM back`, a...).Scan(&path)
	if err != nil {
		return nil, wrap("shortest path", err)
	}
	return path, nil
}

// steps is the SQL of one step of a walk along edges in a direction.
type steps struct {
	// from joins the relationships that leave the walk's current entity,
	// the one the leaves condition names; it ends inside a WHERE or ON
	// clause, so that callers can add conditions with AND.
	from string
	// at and to are the expressions of the entity a step leaves and the
	// entity it reaches.
	at, to string
}

// stepsFrom returns the steps along edges in direction d that leave an
// entity matching leaves ("= x" or "= ANY(xs)"), over the edges that filter
// keeps.
func stepsFrom(d graph.Direction, leaves, filter string) steps {
	switch d {
	case graph.Outbound:
		return steps{
			from: "JOIN relationships r ON " + filter + " AND r.source_entity_id " + leaves,
			at:   "r.source_entity_id", to: "r.target_entity_id",
		}
	case graph.Inbound:
		return steps{
			from: "JOIN relationships r ON " + filter + " AND r.target_entity_id " + leaves,
			at:   "r.target_entity_id", to: "r.source_entity_id",
		}
	default:
		// Each edge is two steps, one each way.
		return steps{
			from: "JOIN relationships r ON " + filter + " AND (r.source_entity_id " + leaves + " OR r.target_entity_id " + leaves + ")" +
				" CROSS JOIN LATERAL (VALUES (r.source_entity_id, r.target_entity_id), (r.target_entity_id, r.source_entity_id)) AS s(a, b)" +
				" ON TRUE WHERE s.a " + leaves,
			at: "s.a", to: "s.b",
		}
	}
}
