// graph.DriverTx.Relationship: the newest period of a relationship by id,
// live or ended. A relationship id does not say its type, so this reads the
// user's relationships by property; relationship_get_typed is the indexed
// lookup when the type is known.
MATCH (s:Entity {user_id: $userId})-[r]->(t:Entity {user_id: $userId})
WHERE r.id = $id AND r.user_id = $userId
RETURN r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
} AS relationship
ORDER BY r.created_at DESC
LIMIT 1
