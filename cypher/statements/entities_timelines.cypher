// graph.Exporter.EntitiesTimelines: the timeline events of the entities of
// $entityIds; the driver groups and orders them.
MATCH (ev:TimelineEvent {user_id: $userId})
WHERE ev.entity_id IN $entityIds
RETURN ev {
  .id, .user_id, .entity_id, .event_type, .timestamp, .time, .source_id, .properties_json
} AS event
