// graph.DriverTx.RelationshipsObservations: every observation of any of the
// relationships $relationshipIds (distinct), in no particular order.
UNWIND $relationshipIds AS relationshipId
MATCH (o:RelationshipObservation {user_id: $userId, relationship_id: relationshipId})
RETURN o {
  .id, .user_id, .relationship_id, .source_id, .observed_at, .created_at,
  .specificity_score, .source_priority, .metadata_json
} AS observation
