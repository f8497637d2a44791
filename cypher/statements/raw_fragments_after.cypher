// graph.Exporter.RawFragmentsAfter: a page of the user's raw fragments with
// an id above $afterId, by id, for cairn export.
MATCH (f:RawFragment {user_id: $userId})
WHERE f.id > $afterId
RETURN f {
  .id, .user_id, .source_id, .entity_id, .entity_type, .field, .value_json, .created_at
} AS fragment
ORDER BY fragment.id
LIMIT $limit
