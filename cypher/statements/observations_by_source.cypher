// graph.DriverTx.ObservationsBySource: what a source produced, by id.
MATCH (:Source {user_id: $userId, id: $sourceId})-[:PRODUCED]->(o:Observation {user_id: $userId})
RETURN o {
  .id, .user_id, .entity_id, .entity_type, .schema_version, .source_id,
  .observed_at, .created_at, .specificity_score, .source_priority,
  .fields_json, .original_entity_id
} AS observation
ORDER BY o.id
