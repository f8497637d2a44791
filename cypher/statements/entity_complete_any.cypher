// graph.EntityCompleter.CompleteEntities for a completion of every type
// (q.Types nil): for each of $kinds, the first $limit of the user's
// completion keys of that kind that begin with $prefix, of any type, in the
// order of key then entity id: one seek of the index entity_key_user
// (migrations/neo4j/007) in its order, cut at the limit. Those hold the
// first $limit of every type together, which is all the answer takes, so
// the user's types need not be listed first (entity_complete is the one for
// a list of types).
UNWIND $kinds AS kind
CALL (kind) {
  MATCH (k:EntityKey)
  WHERE k.user_id = $userId AND k.kind = kind AND k.key STARTS WITH $prefix
  RETURN k.key AS key, k.entity_id AS entity_id
  ORDER BY key, entity_id
  LIMIT $limit
}
RETURN entity_id, kind, key
