// graph.DriverTx.InsertObservation. No row back means the id exists
// (graph.ErrConflict) or the source is not one of the user's (the driver
// tells them apart with source_get). The observation hangs from the source
// that produced it, and from its entity when the entity is already stored
// (entity_link_observations links it otherwise).
MATCH (s:Source {user_id: $userId, id: $sourceId})
OPTIONAL MATCH (existing:Observation {id: $id})
WITH s, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(o:Observation {
  id: $id, user_id: $userId, entity_id: $entityId, entity_type: $entityType,
  schema_version: $schemaVersion, source_id: $sourceId, observed_at: $observedAt,
  created_at: $createdAt, specificity_score: $specificityScore,
  source_priority: $sourcePriority, fields_json: $fieldsJson,
  original_entity_id: $originalEntityId
})
WITH o
OPTIONAL MATCH (e:Entity {user_id: $userId, id: $entityId})
FOREACH (entity IN CASE WHEN e IS NULL THEN [] ELSE [e] END | MERGE (o)-[:OBSERVES]->(entity))
RETURN o.id AS id
