// graph.DriverTx.Observation: one observation of the user by id.
MATCH (o:Observation {user_id: $userId, id: $id})
RETURN o {
  .id, .user_id, .entity_id, .entity_type, .schema_version, .source_id,
  .observed_at, .created_at, .specificity_score, .source_priority,
  .fields_json, .original_entity_id
} AS observation
