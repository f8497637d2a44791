// graph.EntitiesRelationshipsLister.RelationshipsOfEntities: for each of
// $entityIds in order, its first $perEntity relationships as
// relationships_of_entity lists them live now in both directions (newest
// first, then by id; $entityTypes keeps the edges whose other end is of
// those types, a relationship from the entity to itself once), one after
// the other, and of that sequence the first $limit: what a store answer
// lists of its entities' neighbourhood, in one statement however many
// entities it stored. One row holding a list; each relationship is a list
// of its properties, in the order of the driver's edgeColumns.
UNWIND range(0, size($entityIds) - 1) AS i
CALL (i) {
  WITH $entityIds[i] AS entityId
  MATCH (x:Entity {user_id: $userId, id: entityId})-[r]-(:Entity)
  WHERE r.user_id = $userId AND r.ended_at IS NULL
  WITH DISTINCT x, r
  WITH x, r, startNode(r) AS s, endNode(r) AS t
  WHERE $entityTypes IS NULL
    OR (CASE WHEN s = x THEN t ELSE s END).entity_type IN $entityTypes
  WITH s, r, t
  ORDER BY r.created_at DESC, r.id ASC
  LIMIT $perEntity
  RETURN collect([
    r.id, r.user_id, r.metadata_json, r.provenance_json, r.observation_count,
    r.created_at, r.last_observation_at, r.ended_at, type(r),
    s.id, t.id, s.entity_type, t.entity_type
  ]) AS rels
}
WITH i, rels
ORDER BY i
WITH collect(rels) AS lists
RETURN reduce(acc = [], l IN lists |
  CASE WHEN size(acc) >= $limit THEN acc ELSE acc + l END)[..$limit] AS relationships
