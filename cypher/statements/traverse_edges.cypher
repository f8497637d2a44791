// graph.Expander, Tx.Traverse's push-down: in one statement, every
// relationship a breadth-first traversal from $start of at most $maxHops
// (1..5) hops may follow. Hop h expands the entities hop h-1 reached (the
// start for the first) along the relationships live at $at (null: now), of
// $types (null: any), in $direction ('outbound', 'inbound' or 'both') as
// seen from the entity expanded, whose other end's type is in $entityTypes
// (null: any; consent: the traversal never returns nor passes through an
// entity of another type). A hop's entities may include some an earlier
// hop reached: the answer is a superset of what the traversal follows, and
// Tx.Traverse takes from it, hop by hop, exactly the relationships Edges
// would give (which keeps the answer equal to the portable one, ties and
// caps included). Every hop aggregates to one row, so a hop past $maxHops,
// or past an empty frontier, expands nothing. The relationships come back
// as one row holding a list, in no order (the driver sorts them), with the
// types of both ends, as edges returns them (each a list in the order of
// the driver's edgeColumns); no row means no start.
MATCH (start:Entity {user_id: $userId, id: $start})
CALL (start) {
  UNWIND CASE WHEN $maxHops >= 1 THEN [start] ELSE [] END AS x
  MATCH (x)-[r]-(y:Entity)
  WHERE r.user_id = $userId
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND ($types IS NULL OR type(r) IN $types)
    AND ($direction = 'both'
      OR ($direction = 'outbound' AND startNode(r) = x)
      OR ($direction = 'inbound' AND endNode(r) = x))
    AND ($entityTypes IS NULL OR y.entity_type IN $entityTypes)
  RETURN collect(DISTINCT r) AS e1, collect(DISTINCT y) AS f1
}
WITH start, e1, f1
CALL (f1) {
  UNWIND CASE WHEN $maxHops >= 2 THEN f1 ELSE [] END AS x
  MATCH (x)-[r]-(y:Entity)
  WHERE r.user_id = $userId
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND ($types IS NULL OR type(r) IN $types)
    AND ($direction = 'both'
      OR ($direction = 'outbound' AND startNode(r) = x)
      OR ($direction = 'inbound' AND endNode(r) = x))
    AND ($entityTypes IS NULL OR y.entity_type IN $entityTypes)
  RETURN collect(DISTINCT r) AS e2, collect(DISTINCT y) AS f2
}
WITH start, e1, e2, f2
CALL (f2) {
  UNWIND CASE WHEN $maxHops >= 3 THEN f2 ELSE [] END AS x
  MATCH (x)-[r]-(y:Entity)
  WHERE r.user_id = $userId
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND ($types IS NULL OR type(r) IN $types)
    AND ($direction = 'both'
      OR ($direction = 'outbound' AND startNode(r) = x)
      OR ($direction = 'inbound' AND endNode(r) = x))
    AND ($entityTypes IS NULL OR y.entity_type IN $entityTypes)
  RETURN collect(DISTINCT r) AS e3, collect(DISTINCT y) AS f3
}
WITH start, e1, e2, e3, f3
CALL (f3) {
  UNWIND CASE WHEN $maxHops >= 4 THEN f3 ELSE [] END AS x
  MATCH (x)-[r]-(y:Entity)
  WHERE r.user_id = $userId
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND ($types IS NULL OR type(r) IN $types)
    AND ($direction = 'both'
      OR ($direction = 'outbound' AND startNode(r) = x)
      OR ($direction = 'inbound' AND endNode(r) = x))
    AND ($entityTypes IS NULL OR y.entity_type IN $entityTypes)
  RETURN collect(DISTINCT r) AS e4, collect(DISTINCT y) AS f4
}
WITH start, e1, e2, e3, e4, f4
CALL (f4) {
  UNWIND CASE WHEN $maxHops >= 5 THEN f4 ELSE [] END AS x
  MATCH (x)-[r]-(y:Entity)
  WHERE r.user_id = $userId
    AND (($at IS NULL AND r.ended_at IS NULL)
      OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
    AND ($types IS NULL OR type(r) IN $types)
    AND ($direction = 'both'
      OR ($direction = 'outbound' AND startNode(r) = x)
      OR ($direction = 'inbound' AND endNode(r) = x))
    AND ($entityTypes IS NULL OR y.entity_type IN $entityTypes)
  RETURN collect(DISTINCT r) AS e5, collect(DISTINCT y) AS f5
}
CALL (e1, e2, e3, e4, e5) {
  UNWIND e1 + e2 + e3 + e4 + e5 AS r
  RETURN collect(DISTINCT r) AS rels
}
RETURN start.id AS start, [r IN rels | [
    r.id, r.user_id, r.metadata_json, r.provenance_json, r.observation_count,
    r.created_at, r.last_observation_at, r.ended_at, type(r),
    startNode(r).id, endNode(r).id, startNode(r).entity_type, endNode(r).entity_type
  ]] AS relationships
