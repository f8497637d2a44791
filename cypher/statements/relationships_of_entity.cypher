// graph.DriverTx.ListRelationships of one entity, in $direction
// ('outbound', 'inbound' or 'both'), live at $at (null: now), newest first,
// and the total (one row). $entityTypes keeps the edges whose other end is
// of those types. A relationship from the entity to itself is listed once.
MATCH (x:Entity {user_id: $userId, id: $entityId})-[r]-(:Entity)
WHERE r.user_id = $userId
  AND (($at IS NULL AND r.ended_at IS NULL)
    OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
  AND ($type IS NULL OR type(r) = $type)
  AND ($direction = 'both'
    OR ($direction = 'outbound' AND startNode(r) = x)
    OR ($direction = 'inbound' AND endNode(r) = x))
WITH DISTINCT x, r
WITH x, r, startNode(r) AS s, endNode(r) AS t
WHERE $entityTypes IS NULL
  OR (CASE WHEN s = x THEN t ELSE s END).entity_type IN $entityTypes
WITH s, r, t
ORDER BY r.created_at DESC, r.id ASC
WITH collect(r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
}) AS matched
RETURN size(matched) AS total, matched[$offset..($offset + $limit)] AS page
