// graph.DriverTx.EntitiesByIdentifier: the unmerged entities found under an
// identifier, of $entityType unless it is null, by id.
MATCH (:Identifier {user_id: $userId, value: $value})<-[:IDENTIFIED_BY]-(e:Entity {user_id: $userId})
WHERE e.merged_into IS NULL
  AND ($entityType IS NULL OR e.entity_type = $entityType)
WITH DISTINCT e
RETURN e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
} AS entity
ORDER BY e.id
