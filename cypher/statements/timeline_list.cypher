// graph.DriverTx.ListTimelineEvents: a page of events, latest first, and
// the total that match (one row). Every filter parameter may be null;
// $after and $before are exclusive.
MATCH (ev:TimelineEvent {user_id: $userId})
WHERE ($eventType IS NULL OR ev.event_type = $eventType)
  AND ($sourceId IS NULL OR ev.source_id = $sourceId)
  AND ($entityId IS NULL OR ev.entity_id = $entityId)
  AND ($after IS NULL OR ev.time > $after)
  AND ($before IS NULL OR ev.time < $before)
  AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
WITH ev
ORDER BY ev.time DESC, ev.id ASC
WITH collect(ev) AS matched
RETURN size(matched) AS total,
  [ev IN matched[$offset..($offset + $limit)] | ev {
    .id, .user_id, .entity_id, .event_type, .timestamp, .time, .source_id, .properties_json
  }] AS page
