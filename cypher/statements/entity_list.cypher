// graph.DriverTx.ListEntities: a page of the user's entities, newest
// observation first. $types null means any type; $includeMerged false drops
// merged entities. entity_count gives the total.
MATCH (e:Entity {user_id: $userId})
WHERE ($types IS NULL OR e.entity_type IN $types)
  AND ($includeMerged OR e.merged_into IS NULL)
RETURN e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
} AS entity
ORDER BY e.last_observation_at DESC, e.id ASC
SKIP $offset
LIMIT $limit
