// graph.Eraser.Erase: the observations of the relationships of
// $relationshipIds and of the sources of $sourceIds go; then every period
// of the relationships of $relationshipIds, and of those of $touchedIds
// left with no observation.
OPTIONAL MATCH (o:RelationshipObservation {user_id: $userId})
WHERE o.relationship_id IN $relationshipIds OR o.source_id IN $sourceIds
DETACH DELETE o
WITH count(o) AS observations
OPTIONAL MATCH (:Entity {user_id: $userId})-[r]->(:Entity)
WHERE r.user_id = $userId
  AND (r.id IN $relationshipIds
    OR (r.id IN $touchedIds AND NOT EXISTS { MATCH (left:RelationshipObservation {user_id: $userId}) WHERE left.relationship_id = r.id }))
DELETE r
RETURN observations, count(r) AS relationships
