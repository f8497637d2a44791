// graph.DriverTx.ListEntityStats: the page entity_list returns, without
// snapshots and provenance, with each entity's text signature when
// $textSigs asks for it. The page comes back as one row holding one list
// [id, entity_type, observation_count, last_observation_at, merged_into,
// text_sig] per entity, in the page's order: a context load lists up to
// 20,000 entities, and one record per entity cost Bolt and the driver
// four times what the list does. Degrees are entity_stats_degrees'.
MATCH (e:Entity {user_id: $userId})
WHERE ($types IS NULL OR e.entity_type IN $types)
  AND ($includeMerged OR e.merged_into IS NULL)
WITH e
ORDER BY e.last_observation_at DESC, e.id ASC
SKIP $offset
LIMIT $limit
RETURN collect([e.id, e.entity_type, e.observation_count, e.last_observation_at,
  e.merged_into, CASE WHEN $textSigs THEN e.text_sig END]) AS stats
