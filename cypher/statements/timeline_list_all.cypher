// graph.DriverTx.ListTimelineEvents without a filter but the user (the
// driver picks timeline_list otherwise): the page of the user's events,
// latest first, and their total (one row), both from the index
// timeline_event_user_time, as timeline_list reads it. Without the filters,
// which Neo4j evaluates for every event even when their parameters are
// null, the count of 10,000 events takes 4 ms rather than 21.
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL
  RETURN count(ev) AS total
}
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL
  WITH ev
  ORDER BY ev.user_id DESC, ev.time DESC, ev.id ASC
  SKIP $offset
  LIMIT $limit
  RETURN collect(ev {
    .id, .user_id, .entity_id, .event_type, .timestamp, .time, .source_id, .properties_json
  }) AS page
}
RETURN total, page
