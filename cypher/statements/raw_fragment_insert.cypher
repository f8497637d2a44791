// graph.DriverTx.InsertRawFragment: a field no schema names, kept for
// schema evolution, hanging from the source that gave it. No row back: the
// id exists (graph.ErrConflict) or the source is not the user's.
MATCH (s:Source {user_id: $userId, id: $sourceId})
OPTIONAL MATCH (existing:RawFragment {id: $id})
WITH s, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(f:RawFragment {
  id: $id, user_id: $userId, source_id: $sourceId, entity_id: $entityId,
  entity_type: $entityType, field: $field, value_json: $valueJson,
  created_at: $createdAt
})
RETURN f.id AS id
