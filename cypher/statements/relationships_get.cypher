// graph.DriverTx.Relationships: every period of the relationships with ids
// $ids; the driver keeps the newest of each and puts them in the order of
// $ids. As relationship_get, it reads the user's relationships by property,
// since an id does not say its type.
MATCH (s:Entity {user_id: $userId})-[r]->(t:Entity {user_id: $userId})
WHERE r.id IN $ids AND r.user_id = $userId
RETURN r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
} AS relationship
