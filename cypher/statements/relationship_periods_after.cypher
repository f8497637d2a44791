// graph.Exporter.RelationshipPeriodsAfter: a page of every period of the
// user's relationships, live or ended, after ($afterId, $afterCreatedAt)
// in the order of id, then created_at ($afterCreatedAt null: from the
// first period of $afterId on), for cairn export.
MATCH (s:Entity {user_id: $userId})-[r]->(t:Entity {user_id: $userId})
WHERE r.user_id = $userId
  AND (r.id > $afterId OR (r.id = $afterId AND ($afterCreatedAt IS NULL OR r.created_at > $afterCreatedAt)))
RETURN r {
  .id, .user_id, .metadata_json, .provenance_json, .observation_count,
  .created_at, .last_observation_at, .ended_at,
  type: type(r), source_entity_id: s.id, target_entity_id: t.id,
  source_type: s.entity_type, target_type: t.entity_type
} AS relationship
ORDER BY relationship.id, relationship.created_at
LIMIT $limit
