// graph.DriverTx.ListEntityStats: the page entity_list returns, without
// snapshots and provenance, with each entity's text signature when
// $textSigs asks for it, and the
// types of the entities at the other end of each live relationship (the
// driver counts them into Degrees). A relationship from an entity to
// itself is in both lists, so it counts at both ends.
MATCH (e:Entity {user_id: $userId})
WHERE ($types IS NULL OR e.entity_type IN $types)
  AND ($includeMerged OR e.merged_into IS NULL)
WITH e
ORDER BY e.last_observation_at DESC, e.id ASC
SKIP $offset
LIMIT $limit
RETURN e.id AS id, e.entity_type AS entity_type,
  e.observation_count AS observation_count, e.last_observation_at AS last_observation_at,
  e.merged_into AS merged_into, CASE WHEN $textSigs THEN e.text_sig END AS text_sig,
  [(e)-[r]->(o:Entity) WHERE r.user_id = $userId AND r.ended_at IS NULL | o.entity_type]
    + [(e)<-[r]-(o:Entity) WHERE r.user_id = $userId AND r.ended_at IS NULL | o.entity_type]
    AS neighbour_types
ORDER BY last_observation_at DESC, id ASC
