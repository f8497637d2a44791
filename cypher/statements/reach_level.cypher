// One level of the breadth-first search that gives the path
// Tx.ShortestPath returns (graph.Reacher): the entities one hop from
// $frontier in $direction ('outbound', 'inbound' or 'both') over
// relationships of $types (null: any) live at $at (null: now) that are not
// in $seen, each with the lowest id of the frontier entities it is reached
// from, by id. The driver repeats it until $to is reached; it runs only
// when reach_hops_* found a path, so it ends.
UNWIND $frontier AS frontierId
MATCH (f:Entity {user_id: $userId, id: frontierId})-[r]-(n:Entity {user_id: $userId})
WHERE r.user_id = $userId
  AND ($types IS NULL OR type(r) IN $types)
  AND (($at IS NULL AND r.ended_at IS NULL)
    OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
  AND ($direction = 'both'
    OR ($direction = 'outbound' AND startNode(r) = f)
    OR ($direction = 'inbound' AND endNode(r) = f))
  AND NOT n.id IN $seen
RETURN n.id AS id, min(f.id) AS parent
ORDER BY id
