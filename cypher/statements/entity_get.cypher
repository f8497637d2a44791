// graph.DriverTx.Entity: one entity of the user by id, merged or not.
MATCH (e:Entity {user_id: $userId, id: $id})
RETURN e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
} AS entity
