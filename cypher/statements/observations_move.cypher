// graph.DriverTx.MoveObservations, for a merge: every observation of entity
// $from now observes entity $to; original_entity_id keeps where each was
// first recorded.
MATCH (o:Observation {user_id: $userId, entity_id: $from})
OPTIONAL MATCH (o)-[old:OBSERVES]->(:Entity)
DELETE old
WITH DISTINCT o
SET o.entity_id = $to
WITH o
OPTIONAL MATCH (target:Entity {user_id: $userId, id: $to})
FOREACH (entity IN CASE WHEN target IS NULL THEN [] ELSE [target] END | MERGE (o)-[:OBSERVES]->(entity))
RETURN count(o) AS moved
