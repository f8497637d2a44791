// graph.DriverTx.InsertRawFragments (InsertRawFragment is a batch of one):
// fields no schema names, kept for schema evolution, each hanging from the
// source that gave it. As in observations_insert, a row whose id exists or
// whose source is not the user's is skipped, not an error: fewer written
// than rows is a conflict or a missing source, and the driver refuses an id
// given twice before running it.
UNWIND $rows AS row
MATCH (s:Source {user_id: $userId, id: row.source_id})
OPTIONAL MATCH (existing:RawFragment {id: row.id})
WITH s, row, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(f:RawFragment {
  id: row.id, user_id: $userId, source_id: row.source_id, entity_id: row.entity_id,
  entity_type: row.entity_type, field: row.field, value_json: row.value_json,
  created_at: row.created_at
})
RETURN count(f) AS written
