// graph.DriverTx.PutEntities (PutEntity is a batch of one): insert each
// entity of $rows or replace the stored one of the same id. The rows are of
// one user and one type, since the type is the second label and only
// cypher.Label makes labels: the driver runs this once per type of a batch.
// A row's snapshot_props holds the snapshot fields that Neo4j can store as
// properties (scalars and lists of one scalar type), without the names of
// the fields below; snapshot_json stays the whole truth. search_name and
// search_text are the words entity search matches (graph.SearchText), for
// the full-text index entity_search; text_sig is its graph.TextSig, which
// entity_stats_list returns. SET e = … drops
// the properties of fields the snapshot no longer has. An entity of the
// same id but another user is left alone and not counted: fewer written
// than rows is a conflict. Then the entity's completion keys
// (:EntityKey, migrations/neo4j/007) are replaced by the row's keys (those
// graph.NameKeys and the id give an unmerged entity; none for a merged one)
// unless what they are made of is unchanged: the name keys (name_keys, the
// entity's record of them), the type and whether it is merged. Then the
// observations recorded for each entity before it existed (the store
// pipeline inserts them first) are linked to it, so that provenance is a
// traversal:
// (:Source)-[:PRODUCED]->(:Observation)-[:OBSERVES]->(:Entity).
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
  ON CREATE SET e.user_id = $userId
WITH e, row
WHERE e.user_id = $userId
WITH e, row, coalesce(e.name_keys = row.name_keys AND e.entity_type = row.entity_type
  AND (e.merged_into IS NULL) = (row.merged_into IS NULL), false) AS keysKept
SET e = row.snapshot_props,
    e.id = row.id,
    e.user_id = $userId,
    e.entity_type = row.entity_type,
    e.canonical_name = row.canonical_name,
    e.search_name = row.search_name,
    e.search_text = row.search_text,
    e.schema_version = row.schema_version,
    e.snapshot_json = row.snapshot_json,
    e.provenance_json = row.provenance_json,
    e.observation_count = row.observation_count,
    e.last_observation_at = row.last_observation_at,
    e.created_at = row.created_at,
    e.computed_at = row.computed_at,
    e.merged_into = row.merged_into,
    e.merged_at = row.merged_at,
    e.text_sig = row.text_sig,
    e.name_keys = row.name_keys,
    e.user_write = $userWrite,
    e:__LABEL__
WITH e, row, keysKept
CALL (e, row, keysKept) {
  OPTIONAL MATCH (old:EntityKey {user_id: $userId, entity_id: e.id})
  WHERE NOT keysKept
  DELETE old
  WITH e, row, keysKept, count(old) AS deleted
  UNWIND CASE WHEN keysKept THEN [] ELSE row.keys END AS key
  CREATE (:EntityKey {user_id: $userId, entity_type: row.entity_type, kind: key.kind, key: key.key, entity_id: e.id,
    type_order: key.type_order, user_order: key.user_order})
}
WITH e
OPTIONAL MATCH (o:Observation {user_id: $userId, entity_id: e.id})
WHERE NOT EXISTS { (o)-[:OBSERVES]->(e) }
FOREACH (obs IN CASE WHEN o IS NULL THEN [] ELSE [o] END | MERGE (obs)-[:OBSERVES]->(e))
RETURN count(DISTINCT e) AS written
