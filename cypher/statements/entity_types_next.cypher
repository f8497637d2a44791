// One step of graph.DriverTx.EntityTypes: the smallest type above
// $afterType of which the user has an unmerged entity, or no row. The
// driver starts from "" and asks again after each type it gets, a skip over
// the index entity_user_type (migrations/neo4j/002) in its order, so that
// listing the types costs one seek per type, not a read of every entity.
// The ORDER BY names both properties of the index so that Neo4j's planner
// reads it in its order and stops at the first unmerged entity (a Limit on
// the seek): ordered by entity_type alone it read every entity above
// $afterType and sorted them (7,000 at 10,000 entities of 20 types).
MATCH (e:Entity)
WHERE e.user_id = $userId AND e.entity_type > $afterType AND e.merged_into IS NULL
WITH e
ORDER BY e.user_id, e.entity_type
LIMIT 1
RETURN e.entity_type AS entity_type
