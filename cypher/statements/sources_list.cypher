// graph.DriverTx.ListSources: a page of the user's sources, newest first,
// and the total that match (one row). $kind and $entityTypes may be null;
// $entityTypes keeps the sources of kind $fileKind and those that produced
// an observation of an entity of one of those types. $excludeIds is a list,
// maybe empty, of sources left out.
MATCH (s:Source {user_id: $userId})
WHERE ($kind IS NULL OR s.kind = $kind)
  AND NOT s.id IN $excludeIds
  AND ($entityTypes IS NULL OR s.kind = $fileKind OR EXISTS {
    MATCH (s)-[:PRODUCED]->(o:Observation {user_id: $userId})
    WHERE o.entity_type IN $entityTypes
  })
WITH s
ORDER BY s.created_at DESC, s.id ASC
WITH collect(s {
  .id, .user_id, .content_hash, .kind, .mime_type, .original_filename, .size,
  .provenance_json, .created_at
}) AS matched
RETURN size(matched) AS total, matched[$offset..($offset + $limit)] AS page
