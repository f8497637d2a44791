// graph.DriverTx.InsertSource. No row back means a source with that id
// exists: the driver returns graph.ErrConflict without failing the
// transaction (a failed statement would end it). The uniqueness constraints
// on Source.id and (user_id, content_hash) catch what a concurrent
// transaction inserts between the check and the CREATE.
OPTIONAL MATCH (existing:Source {id: $id})
WITH existing
WHERE existing IS NULL
CREATE (s:Source {
  id: $id, user_id: $userId, content_hash: $contentHash, kind: $kind,
  mime_type: $mimeType, original_filename: $originalFilename, size: $size,
  provenance_json: $provenanceJson, created_at: $createdAt
})
RETURN s.id AS id
