// graph.DriverTx.ListEntityStats: the user's live relationships, each as
// [source id, source type, target id, target type], in one row, from which
// the driver counts the Degrees of the entities it lists (a relationship
// from an entity to itself counts at both ends). One pass over the user's
// relationships costs a fraction of a pattern comprehension per listed
// entity, which expands every entity twice, most of them to nothing.
MATCH (a:Entity {user_id: $userId})-[r]->(b:Entity)
WHERE r.user_id = $userId AND r.ended_at IS NULL
RETURN collect([a.id, a.entity_type, b.id, b.entity_type]) AS ends
