// graph.DriverTx.EntitiesObservations: every observation of any of the
// entities $entityIds (distinct), in no particular order: AllObservations
// of many entities, one seek of observation_entity each.
UNWIND $entityIds AS entityId
MATCH (o:Observation {user_id: $userId, entity_id: entityId})
RETURN o {
  .id, .user_id, .entity_id, .entity_type, .schema_version, .source_id,
  .observed_at, .created_at, .specificity_score, .source_priority,
  .fields_json, .original_entity_id
} AS observation
