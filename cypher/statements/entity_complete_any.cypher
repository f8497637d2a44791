// graph.EntityCompleter.CompleteEntities for a completion of every type
// (q.Types nil): for each of $scopes (a kind of the user's keys), the first
// $limit of the user's completion keys of that kind that begin with
// $prefix, of any type, in the order of key then entity id: one seek of
// the index entity_key_user_order (migrations/neo4j/007) in its order, cut
// at the limit. Those hold the first $limit of every type together, which
// is all the answer takes, so the user's types need not be listed first
// (entity_complete is the one for a list of types).
UNWIND $scopes AS scope
CALL (scope) {
  MATCH (k:EntityKey)
  WHERE k.user_order STARTS WITH scope.order + $prefix
  WITH k
  ORDER BY k.user_order
  LIMIT $limit
  RETURN k
}
WITH k
WHERE k.user_id = $userId
RETURN k.entity_id AS entity_id, k.kind AS kind, k.key AS key
