// Entity search by name or identifier, over the full-text index
// entity_text (migrations/neo4j/003). $query is a Lucene query that the
// driver builds with every special character of the user's text escaped.
// The index holds every user's nodes: the user filter follows the index
// call, and LIMIT comes after it, so other users' hits never crowd a
// user's own out. An identifier hit counts for the entities found under it.
CALL db.index.fulltext.queryNodes('entity_text', $query) YIELD node, score
WHERE node.user_id = $userId
OPTIONAL MATCH (node)<-[:IDENTIFIED_BY]-(owner:Entity {user_id: $userId})
WITH coalesce(owner, node) AS e, score
WHERE e:Entity
  AND e.merged_into IS NULL
  AND ($types IS NULL OR e.entity_type IN $types)
WITH e, max(score) AS score
RETURN e.id AS id, score
ORDER BY score DESC, id ASC
LIMIT $limit
