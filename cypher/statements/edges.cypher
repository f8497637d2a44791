// graph.DriverTx.Edges: the relationships live at $at (null: now) that
// touch any of $entityIds in $direction ('outbound', 'inbound' or 'both'),
// of $types (null: any), with the types of both ends, by id. Edges to
// merged entities are included; the caller decides. They come back as
// one row holding a list, in no order (the driver sorts them): Bolt and
// the Go driver pay per record, and a hop of a traversal can cross
// hundreds of relationships. Each is a list of its properties, in the
// order of the driver's edgeColumns.
UNWIND $entityIds AS entityId
MATCH (x:Entity {user_id: $userId, id: entityId})-[r]-(:Entity)
WHERE r.user_id = $userId
  AND (($at IS NULL AND r.ended_at IS NULL)
    OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
  AND ($types IS NULL OR type(r) IN $types)
  AND ($direction = 'both'
    OR ($direction = 'outbound' AND startNode(r) = x)
    OR ($direction = 'inbound' AND endNode(r) = x))
WITH DISTINCT r
RETURN collect([
  r.id, r.user_id, r.metadata_json, r.provenance_json, r.observation_count,
  r.created_at, r.last_observation_at, r.ended_at, type(r),
  startNode(r).id, endNode(r).id, startNode(r).entity_type, endNode(r).entity_type
]) AS relationships
