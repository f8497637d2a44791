// Whether $path, a shortest outbound path from $path[0] over relationships
// of $types (null: any) live at $at (null: now), is the one
// Tx.ShortestPath returns (graph.Reacher): the path on which each entity's
// predecessor is the lowest-id entity of the previous breadth-first level
// with an edge to it. It is, unless some entity x with an edge to $path[i]
// and a lower id than $path[i-1] is as close to the start as $path[i-1]
// (i - 1 hops; it cannot be closer, or $path[i] would be). The answer
// counts such entities: 0 means $path is the one, and the driver is spared
// a breadth-first search of one round trip per level. For inbound paths
// the driver passes the path reversed with $reversed true: then "an edge
// to" is an edge from, and "as close to the start" is measured to the end.
// __MAX_HOPS__ is filled as in reach_hops_directed.
// Each path entity's edges are expanded from the entity, found by its id
// (a subquery, so that the planner does not start from a range seek of
// x.id < pid, every entity with a lower id for each step of the path:
// 14 s for a path of 1,000).
UNWIND range(1, size($path) - 1) AS i
MATCH (n:Entity {id: $path[i]})
WHERE n.user_id = $userId
CALL (n, i) {
  MATCH (n)-[r]-(x:Entity)
  WHERE r.user_id = $userId
    AND x.user_id = $userId
    AND x.id < $path[i - 1]
    AND x.id <> $path[0]
    AND ($types IS NULL OR type(r) IN $types)
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND (($reversed AND startNode(r) = n) OR (NOT $reversed AND endNode(r) = n))
  RETURN DISTINCT x
}
WITH DISTINCT i, x
MATCH (s:Entity {user_id: $userId, id: $path[0]})
OPTIONAL MATCH p = shortestPath((s)-[*1..__MAX_HOPS__]->(x))
WHERE NOT $reversed
  AND all(q IN relationships(p) WHERE q.user_id = $userId
    AND ($types IS NULL OR type(q) IN $types)
    AND (($at IS NULL AND q.ended_at IS NULL)
      OR ($at IS NOT NULL AND q.created_at <= $at AND (q.ended_at IS NULL OR q.ended_at > $at))))
OPTIONAL MATCH b = shortestPath((x)-[*1..__MAX_HOPS__]->(s))
WHERE $reversed
  AND all(q IN relationships(b) WHERE q.user_id = $userId
    AND ($types IS NULL OR type(q) IN $types)
    AND (($at IS NULL AND q.ended_at IS NULL)
      OR ($at IS NOT NULL AND q.created_at <= $at AND (q.ended_at IS NULL OR q.ended_at > $at))))
WITH i, x, coalesce(length(p), length(b)) AS hops
WHERE hops = i - 1
RETURN count(x) AS closer
