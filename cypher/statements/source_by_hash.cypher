// graph.DriverTx.SourceByHash: the user's source with that content hash.
MATCH (s:Source {user_id: $userId, content_hash: $contentHash})
RETURN s {
  .id, .user_id, .content_hash, .kind, .mime_type, .original_filename, .size,
  .provenance_json, .created_at
} AS source
