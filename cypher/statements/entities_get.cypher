// graph.DriverTx.Entities: the entities of these ids that exist; the driver
// puts them in the order of $ids.
MATCH (e:Entity {user_id: $userId})
WHERE e.id IN $ids
RETURN e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
} AS entity
