// graph.DriverTx.Relationship when the type is known (a relationship id is
// the hash of its type and endpoints): the per-type index on id
// (migrations/neo4j/002, or relationship_index for a registered type)
// finds it.
MATCH (s:Entity)-[r:__REL_TYPE__ {id: $id}]->(t:Entity)
WHERE r.user_id = $userId AND s.user_id = $userId AND t.user_id = $userId
RETURN r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
} AS relationship
ORDER BY r.created_at DESC
LIMIT 1
