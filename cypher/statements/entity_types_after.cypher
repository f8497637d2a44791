// One step of graph.DriverTx.EntityTypes: for each type of $afterTypes
// (and "", which is below every type), the smallest type above it of which
// the user has an unmerged entity; no row for one with none above it. The
// driver asks first after "" and each type it listed before (its type
// cache's, of an older version of the user's graph), which answers in one
// statement while the user's types have not changed, and then again after
// the types it has not yet seen answered: a skip over the index
// entity_user_type (migrations/neo4j/002) in its order, one seek per type
// asked, not a read of every entity. The ORDER BY names both properties of
// the index so that Neo4j's planner reads it in its order and stops at the
// first unmerged entity (a Limit on the seek): ordered by entity_type
// alone it read every entity above the type and sorted them (7,000 at
// 10,000 entities of 20 types).
UNWIND $afterTypes AS afterType
CALL (afterType) {
  MATCH (e:Entity)
  WHERE e.user_id = $userId AND e.entity_type > afterType AND e.merged_into IS NULL
  WITH e
  ORDER BY e.user_id, e.entity_type
  LIMIT 1
  RETURN e.entity_type AS entity_type
}
RETURN afterType AS after_type, entity_type
