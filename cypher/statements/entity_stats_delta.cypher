// graph.DriverTx.ListEntityStats through the read cache
// (graph/neo4j/statscache.go): the entities of the user whose statistics
// changed since the user's write $since (those stamped by a later write:
// put, or at an end of a relationship put), each as entity_stats_list's
// entries are, with the types of the entities at the other end of its live
// relationships when $degrees asks for them (a relationship from an entity
// to itself is in both lists). Filters apply in the driver.
MATCH (e:Entity {user_id: $userId})
WHERE e.user_write > $since
RETURN collect([e.id, e.entity_type, e.observation_count, e.last_observation_at,
  e.merged_into, CASE WHEN $textSigs THEN e.text_sig END,
  CASE WHEN $degrees THEN
    [(e)-[r]->(o:Entity) WHERE r.user_id = $userId AND r.ended_at IS NULL | o.entity_type]
    + [(e)<-[r]-(o:Entity) WHERE r.user_id = $userId AND r.ended_at IS NULL | o.entity_type]
  ELSE [] END]) AS stats
