// graph.DriverTx.InsertObservations (InsertObservation is a batch of one).
// Each row of $rows, of one user, becomes an observation that hangs from
// the source that produced it, and from its entity when the entity is
// already stored (entities_put links it otherwise). A row whose id exists,
// or whose source is not one of the user's, is skipped rather than failing
// the statement, since a failed statement ends the Neo4j transaction:
// fewer written than rows means one of the two, which the driver tells
// apart with source_get. The rows of one statement do not see each other's
// nodes here, so the driver refuses an id given twice before running it.
UNWIND $rows AS row
MATCH (s:Source {user_id: $userId, id: row.source_id})
OPTIONAL MATCH (existing:Observation {id: row.id})
WITH s, row, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(o:Observation {
  id: row.id, user_id: $userId, entity_id: row.entity_id, entity_type: row.entity_type,
  schema_version: row.schema_version, source_id: row.source_id, observed_at: row.observed_at,
  created_at: row.created_at, specificity_score: row.specificity_score,
  source_priority: row.source_priority, fields_json: row.fields_json,
  original_entity_id: row.original_entity_id
})
WITH o
OPTIONAL MATCH (e:Entity {user_id: $userId, id: o.entity_id})
FOREACH (entity IN CASE WHEN e IS NULL THEN [] ELSE [e] END | MERGE (o)-[:OBSERVES]->(entity))
RETURN count(DISTINCT o) AS written
