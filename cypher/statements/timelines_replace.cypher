// graph.DriverTx.ReplaceEntityTimelines (ReplaceTimelineEvents is a batch
// of one): every timeline event of the entities of $rows, maps {entity_id,
// events}, is dropped, then each row's events are created, each event a
// map with the keys below. The count after the delete ends it before the
// first event is created. Each event keeps its entity's type (a type never
// changes: it is part of the entity's id), so that listings filter by type
// without reading entities, and hangs from its entity.
OPTIONAL MATCH (old:TimelineEvent {user_id: $userId})
WHERE old.entity_id IN [row IN $rows | row.entity_id]
DETACH DELETE old
WITH count(old) AS dropped
UNWIND $rows AS row
OPTIONAL MATCH (e:Entity {user_id: $userId, id: row.entity_id})
UNWIND row.events AS event
CREATE (ev:TimelineEvent {
  id: event.id, user_id: $userId, entity_id: row.entity_id, entity_type: e.entity_type,
  event_type: event.event_type, timestamp: event.timestamp, time: event.time,
  source_id: event.source_id, properties_json: event.properties_json
})
FOREACH (entity IN CASE WHEN e IS NULL THEN [] ELSE [e] END | CREATE (entity)-[:HAS_EVENT]->(ev))
RETURN count(ev) AS added
