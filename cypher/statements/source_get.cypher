// graph.DriverTx.Source: one source of the user by id.
MATCH (s:Source {user_id: $userId, id: $id})
RETURN s {
  .id, .user_id, .content_hash, .kind, .mime_type, .original_filename, .size,
  .provenance_json, .created_at
} AS source
