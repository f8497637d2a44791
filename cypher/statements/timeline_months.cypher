// graph.TimelinePeriodLister's months: the months of the year $year (UTC;
// events' times are stored in UTC) in which the user has an event, of an
// entity of $entityTypes when it is not null, newest first: one seek a
// month in the index timeline_event_user_time (migrations/neo4j/002) that
// stops at the month's first event. (A seek a month over a whole
// timeline of 25 years took 28 ms: months are asked for one year at a
// time.)
UNWIND range(12, 1, -1) AS month
WITH month, datetime({year: $year, month: month, day: 1, timezone: 'UTC'}) AS start
CALL (start) {
  MATCH (ev:TimelineEvent)
  WHERE ev.user_id = $userId
    AND ev.time >= start
    AND ev.time < start + duration({months: 1})
    AND ($entityTypes IS NULL OR ev.entity_type IN $entityTypes)
  RETURN ev.id AS found
  LIMIT 1
}
RETURN month
