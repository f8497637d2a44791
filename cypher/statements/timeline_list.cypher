// graph.DriverTx.ListTimelineEvents: a page of events, latest first, and
// the total that match (one row). Every filter parameter may be null;
// $after and $before are exclusive. The total counts the user's events in
// the index timeline_event_user_time (migrations/neo4j/002), and the page
// reads that index in its order, latest first, and stops at the page
// (a PartialTop orders the events of one instant by id). The statement
// that collected every match, sorted, to slice the page of it was planned
// as a scan of every user's events (NodeByLabelScan) and a sort of the
// user's: 100 ms at 10,000 events (PROFILE: 42,000 db hits; now 10,768,
// the count's index entries and the page's). Events always have a time;
// ordering by the user too, fixed here, is what lets the planner read the
// index in its order.
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL
    AND ($eventType IS NULL OR ev.event_type = $eventType)
    AND ($sourceId IS NULL OR ev.source_id = $sourceId)
    AND ($entityId IS NULL OR ev.entity_id = $entityId)
    AND ($after IS NULL OR ev.time > $after)
    AND ($before IS NULL OR ev.time < $before)
    AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
  RETURN count(ev) AS total
}
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL
    AND ($eventType IS NULL OR ev.event_type = $eventType)
    AND ($sourceId IS NULL OR ev.source_id = $sourceId)
    AND ($entityId IS NULL OR ev.entity_id = $entityId)
    AND ($after IS NULL OR ev.time > $after)
    AND ($before IS NULL OR ev.time < $before)
    AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
  WITH ev
  ORDER BY ev.user_id DESC, ev.time DESC, ev.id ASC
  SKIP $offset
  LIMIT $limit
  RETURN collect(ev {
    .id, .user_id, .entity_id, .event_type, .timestamp, .time, .source_id, .properties_json
  }) AS page
}
RETURN total, page
