// graph.Exporter.SourcesAfter: a page of the user's sources with an id
// above $afterId, by id, for cairn export.
MATCH (s:Source {user_id: $userId})
WHERE s.id > $afterId
RETURN s {
  .id, .user_id, .content_hash, .kind, .mime_type, .original_filename, .size,
  .provenance_json, .created_at
} AS source
ORDER BY source.id
LIMIT $limit
