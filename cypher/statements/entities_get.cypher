// graph.DriverTx.Entities: the entities of these ids that exist, as one
// row holding a list (a context load's keyword scan reads up to a
// thousand, a traversal hundreds, and Bolt pays per record); the driver
// puts them in the order of $ids.
MATCH (e:Entity {user_id: $userId})
WHERE e.id IN $ids
RETURN collect(e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
}) AS entities
