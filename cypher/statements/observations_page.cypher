// graph.DriverTx.Observations: a page of an entity's observations, newest
// first, and their total (one row; the page is a list).
MATCH (o:Observation {user_id: $userId, entity_id: $entityId})
WITH o
ORDER BY o.observed_at DESC, o.id ASC
WITH collect(o) AS matched
RETURN size(matched) AS total,
  [o IN matched[$offset..($offset + $limit)] | o {
  .id, .user_id, .entity_id, .entity_type, .schema_version, .source_id,
  .observed_at, .created_at, .specificity_score, .source_priority,
  .fields_json, .original_entity_id
}] AS page
