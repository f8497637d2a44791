// graph.DriverTx.EntityTypeCounts: how many unmerged entities the user has
// of each type.
MATCH (e:Entity {user_id: $userId})
WHERE e.merged_into IS NULL
RETURN e.entity_type AS entity_type, count(e) AS total
