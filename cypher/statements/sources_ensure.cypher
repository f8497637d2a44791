// graph.DriverTx.EnsureSources: for each row of $rows (one user, distinct
// content hashes: the driver sees to both), the user's source with the
// row's content hash, created from the row when there is none and its id is
// free. A row that gives nothing back had its id taken by another hash
// (graph.ErrConflict).
UNWIND $rows AS row
OPTIONAL MATCH (existing:Source {user_id: $userId, content_hash: row.content_hash})
OPTIONAL MATCH (taken:Source {id: row.id})
FOREACH (_ IN CASE WHEN existing IS NULL AND taken IS NULL THEN [1] ELSE [] END |
  CREATE (:Source {
    id: row.id, user_id: $userId, content_hash: row.content_hash, kind: row.kind,
    mime_type: row.mime_type, original_filename: row.original_filename, size: row.size,
    provenance_json: row.provenance_json, created_at: row.created_at
  })
)
WITH row
MATCH (s:Source {user_id: $userId, content_hash: row.content_hash})
RETURN s {
  .id, .user_id, .content_hash, .kind, .mime_type, .original_filename, .size,
  .provenance_json, .created_at
} AS source
