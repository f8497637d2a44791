// Links an entity to the observations recorded for it before it was put
// (the store pipeline inserts observations first), so that provenance is a
// traversal: (:Source)-[:PRODUCED]->(:Observation)-[:OBSERVES]->(:Entity).
MATCH (e:Entity {user_id: $userId, id: $id})
MATCH (o:Observation {user_id: $userId, entity_id: $id})
WHERE NOT EXISTS { (o)-[:OBSERVES]->(e) }
MERGE (o)-[:OBSERVES]->(e)
RETURN count(o) AS linked
