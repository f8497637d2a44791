// graph.EntityCompleter.CompleteEntities: for each of $scopes (a type and
// kind of the user's keys: name and inner keys, or ids), the first $limit
// of the user's completion keys (:EntityKey, migrations/neo4j/007) of that
// type and kind that begin with $prefix, in the order of key then entity
// id: a seek of the index entity_key_type_order, whose values begin with
// the scope's order, read in its order and cut at the limit, so that a
// completion reads at most $limit keys per type and kind however many
// match. The driver orders the union and keeps each entity's first. Neo4j
// orders strings by UTF-16 code units, which differs from the byte order
// of graph.FirstCompletions only between a character above U+FFFF and one
// in U+E000-U+FFFF at the first difference of two keys.
UNWIND $scopes AS scope
CALL (scope) {
  MATCH (k:EntityKey)
  WHERE k.type_order STARTS WITH scope.order + $prefix
  WITH k
  ORDER BY k.type_order
  LIMIT $limit
  RETURN k
}
WITH k
WHERE k.user_id = $userId
RETURN k.entity_id AS entity_id, k.kind AS kind, k.key AS key
