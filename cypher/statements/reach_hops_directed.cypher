// The first step of a push-down of graph.Reacher for outbound paths (the
// driver swaps $from and $to for inbound ones): the length of a shortest
// path from $from to $to over relationships of $types (null: any) live at
// $at (null: now), or no row when there is none. __MAX_HOPS__ is filled
// with at least the number of the user's entities less one (no shortest
// path is longer), so the search is exhaustive and still bounded. Which of several shortest
// paths Neo4j finds is its choice; reach_level then rebuilds the one
// Tx.ShortestPath returns, only when there is one and reach_canonical
// finds that Neo4j's path (path, its entity ids) is not already that one.
MATCH (a:Entity {user_id: $userId, id: $from})
MATCH (b:Entity {user_id: $userId, id: $to})
MATCH p = shortestPath((a)-[*1..__MAX_HOPS__]->(b))
WHERE all(r IN relationships(p) WHERE r.user_id = $userId
  AND ($types IS NULL OR type(r) IN $types)
  AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at))))
RETURN length(p) AS hops, [n IN nodes(p) | coalesce(n.id, '')] AS path
