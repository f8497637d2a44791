// graph.DriverTx.RelationshipObservations: every observation of a
// relationship, newest first.
MATCH (o:RelationshipObservation {user_id: $userId, relationship_id: $relationshipId})
RETURN o {
  .id, .user_id, .relationship_id, .source_id, .observed_at, .created_at,
  .specificity_score, .source_priority, .metadata_json
} AS observation
ORDER BY o.observed_at DESC, o.id ASC
