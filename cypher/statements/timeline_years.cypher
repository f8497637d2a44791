// graph.TimelinePeriodLister's years: the years (UTC; events' times are
// stored in UTC) in which the user has an event, of an entity of
// $entityTypes when it is not null. The newest and the oldest event are
// each one seek at an end of the index timeline_event_user_time
// (migrations/neo4j/002); then each year between them, newest first, is
// one seek in that index that stops at the year's first event. No row
// when the user has no event. When the years span $maxSpan or more, years
// is empty and the driver walks them one statement a year instead.
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
  WITH ev
  ORDER BY ev.user_id DESC, ev.time DESC
  LIMIT 1
  RETURN ev.time.year AS newest
}
CALL () {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId AND ev.time IS NOT NULL AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
  WITH ev
  ORDER BY ev.user_id, ev.time
  LIMIT 1
  RETURN ev.time.year AS oldest
}
CALL (newest, oldest) {
  UNWIND CASE WHEN newest - oldest < $maxSpan THEN range(newest, oldest, -1) ELSE [] END AS year
  CALL (year) {
    MATCH (ev:TimelineEvent)
    WHERE ev.user_id = $userId
      AND ev.time >= datetime({year: year, timezone: 'UTC'})
      AND ev.time < datetime({year: year + 1, timezone: 'UTC'})
      AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
    RETURN ev.id AS found
    LIMIT 1
  }
  RETURN collect(year) AS years
}
RETURN newest, oldest, years
