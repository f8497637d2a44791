// graph.DriverTx.ListRelationships without an entity: a page of the user's
// relationships live at $at (null: now), newest first, and the total (one
// row). $type and $entityTypes may be null; $entityTypes keeps the edges
// whose both ends are of those types.
MATCH (s:Entity {user_id: $userId})-[r]->(t:Entity {user_id: $userId})
WHERE r.user_id = $userId
  AND (($at IS NULL AND r.ended_at IS NULL)
    OR ($at IS NOT NULL AND r.created_at <= $at AND (r.ended_at IS NULL OR r.ended_at > $at)))
  AND ($type IS NULL OR type(r) = $type)
  AND ($entityTypes IS NULL OR (s.entity_type IN $entityTypes AND t.entity_type IN $entityTypes))
WITH s, r, t
ORDER BY r.created_at DESC, r.id ASC
WITH collect(r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
}) AS matched
RETURN size(matched) AS total, matched[$offset..($offset + $limit)] AS page
