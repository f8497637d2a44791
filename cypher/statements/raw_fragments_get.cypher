// graph.Exporter.RawFragmentsByID: the user's raw fragments of these ids
// that exist; the driver puts them in the order of $ids.
MATCH (f:RawFragment {user_id: $userId})
WHERE f.id IN $ids
RETURN f {
  .id, .user_id, .source_id, .entity_id, .entity_type, .field, .value_json, .created_at
} AS fragment
