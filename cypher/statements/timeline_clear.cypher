// The first half of graph.DriverTx.ReplaceTimelineEvents: drop every
// timeline event of the entity.
MATCH (ev:TimelineEvent {user_id: $userId, entity_id: $entityId})
DETACH DELETE ev
