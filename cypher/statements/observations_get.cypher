// graph.DriverTx.ObservationsByID: the user's observations of these ids
// that exist; the driver puts them in the order of $ids.
MATCH (o:Observation {user_id: $userId})
WHERE o.id IN $ids
RETURN o {
  .id, .user_id, .entity_id, .entity_type, .schema_version, .source_id,
  .observed_at, .created_at, .specificity_score, .source_priority,
  .fields_json, .original_entity_id
} AS observation
