// graph.Exporter.EntitiesAfter: a page of the user's entities, merged or
// not, with an id above $afterId, by id, for cairn export.
MATCH (e:Entity {user_id: $userId})
WHERE e.id > $afterId
RETURN e {
  .id, .user_id, .entity_type, .canonical_name, .schema_version, .snapshot_json,
  .provenance_json, .observation_count, .last_observation_at, .created_at,
  .computed_at, .merged_into, .merged_at
} AS entity
ORDER BY entity.id
LIMIT $limit
