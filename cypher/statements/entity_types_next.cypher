// One step of graph.DriverTx.EntityTypes: the smallest type above
// $afterType of which the user has an unmerged entity, or no row. The
// driver starts from "" and asks again after each type it gets, a skip over
// the index entity_user_type (migrations/neo4j/002) in its order, so that
// listing the types costs one seek per type, not a read of every entity.
MATCH (e:Entity {user_id: $userId})
WHERE e.entity_type > $afterType AND e.merged_into IS NULL
RETURN e.entity_type AS entity_type
ORDER BY entity_type
LIMIT 1
