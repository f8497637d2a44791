// graph.TextScreener: the type, name and snapshot text of the entities of
// these ids that exist, which the driver screens for words itself.
MATCH (e:Entity {user_id: $userId})
WHERE e.id IN $ids
RETURN e.id AS id, e.entity_type AS entity_type, e.canonical_name AS canonical_name,
  e.snapshot_json AS snapshot_json
