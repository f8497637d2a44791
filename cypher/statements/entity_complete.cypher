// graph.EntityCompleter.CompleteEntities: for each of $types and each of
// $kinds (name and inner keys, or ids), the first $limit of the user's
// completion keys (:EntityKey, migrations/neo4j/007) of that type and kind
// that begin with $prefix, in the order of key then entity id: a seek of
// the index entity_key_prefix read in its order and cut at the limit, so
// that a completion reads at most $limit keys per type and kind however
// many match. The driver orders the union and keeps each entity's first.
UNWIND $types AS type
UNWIND $kinds AS kind
CALL (type, kind) {
  MATCH (k:EntityKey)
  WHERE k.user_id = $userId AND k.entity_type = type AND k.kind = kind AND k.key STARTS WITH $prefix
  RETURN k.key AS key, k.entity_id AS entity_id
  ORDER BY key, entity_id
  LIMIT $limit
}
RETURN entity_id, kind, key
