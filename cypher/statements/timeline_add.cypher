// The second half of graph.DriverTx.ReplaceTimelineEvents. $events is a
// list of maps with the keys below. Each event keeps its entity's type (a
// type never changes: it is part of the entity's id), so that listings
// filter by type without reading entities, and hangs from its entity.
OPTIONAL MATCH (e:Entity {user_id: $userId, id: $entityId})
UNWIND $events AS event
CREATE (ev:TimelineEvent {
  id: event.id, user_id: $userId, entity_id: $entityId, entity_type: e.entity_type,
  event_type: event.event_type, timestamp: event.timestamp, time: event.time,
  source_id: event.source_id, properties_json: event.properties_json
})
FOREACH (entity IN CASE WHEN e IS NULL THEN [] ELSE [e] END | CREATE (entity)-[:HAS_EVENT]->(ev))
RETURN count(ev) AS added
