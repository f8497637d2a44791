// graph.Eraser.Erase, first: the ids of every relationship, in any period,
// with an end among the entities of $entityIds, and of those that hold an
// observation of a source of $sourceIds (touched).
OPTIONAL MATCH (x:Entity {user_id: $userId})-[r]-(:Entity)
WHERE x.id IN $entityIds AND r.user_id = $userId
WITH collect(DISTINCT r.id) AS ended
OPTIONAL MATCH (o:RelationshipObservation {user_id: $userId})
WHERE o.source_id IN $sourceIds
RETURN ended, collect(DISTINCT o.relationship_id) AS touched
