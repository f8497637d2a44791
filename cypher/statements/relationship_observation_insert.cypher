// graph.DriverTx.InsertRelationshipObservation. No row back: the id exists
// (graph.ErrConflict) or the source is not the user's. It hangs from the
// source that produced it; relationship_id names the relationship (a node
// cannot link to a relationship).
MATCH (s:Source {user_id: $userId, id: $sourceId})
OPTIONAL MATCH (existing:RelationshipObservation {id: $id})
WITH s, existing
WHERE existing IS NULL
CREATE (s)-[:PRODUCED]->(o:RelationshipObservation {
  id: $id, user_id: $userId, relationship_id: $relationshipId, source_id: $sourceId,
  observed_at: $observedAt, created_at: $createdAt, specificity_score: $specificityScore,
  source_priority: $sourcePriority, metadata_json: $metadataJson
})
RETURN o.id AS id
