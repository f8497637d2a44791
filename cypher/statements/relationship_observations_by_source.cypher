// graph.DriverTx.RelationshipObservationsBySource: the relationship
// observations a source produced, by id.
MATCH (o:RelationshipObservation {user_id: $userId})
WHERE o.source_id = $sourceId
RETURN o {
  .id, .user_id, .relationship_id, .source_id, .observed_at, .created_at,
  .specificity_score, .source_priority, .metadata_json
} AS observation
ORDER BY o.id
