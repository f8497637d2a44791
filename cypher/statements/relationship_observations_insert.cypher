// graph.DriverTx.InsertRelationshipObservations: relationship_observation_insert
// for each row of $rows, all of one user. A row whose id exists, or whose
// source is not one of the user's, is skipped rather than failing the
// statement: fewer written than rows means one of the two, which the driver
// tells apart with source_get. It refuses an id given twice before running.
UNWIND $rows AS row
MATCH (s:Source {user_id: $userId, id: row.source_id})
OPTIONAL MATCH (existing:RelationshipObservation {id: row.id})
WITH s, row, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(o:RelationshipObservation {
  id: row.id, user_id: $userId, relationship_id: row.relationship_id, source_id: row.source_id,
  observed_at: row.observed_at, created_at: row.created_at, specificity_score: row.specificity_score,
  source_priority: row.source_priority, metadata_json: row.metadata_json
})
RETURN count(o) AS written
