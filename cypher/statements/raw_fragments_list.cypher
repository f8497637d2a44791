// graph.DriverTx.RawFragments: the user's raw fragments, of one entity type
// unless $entityType is empty, recorded for the entities $entityIds unless
// it is null, ordered by id.
MATCH (f:RawFragment {user_id: $userId})
WHERE ($entityType = '' OR f.entity_type = $entityType)
  AND ($entityIds IS NULL OR f.entity_id IN $entityIds)
RETURN f {
  .id, .user_id, .source_id, .entity_id, .entity_type, .field, .value_json, .created_at
} AS fragment
ORDER BY f.id
