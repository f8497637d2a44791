// graph.EntitySearcher over the full-text index entity_search
// (migrations/neo4j/004). $query is the Lucene query the driver builds from
// the search's terms (words of letters, digits and marks only): each term
// required, in the name (boosted) or the snapshot text, the last one also
// as a prefix. The index holds every user's nodes: the user filter follows
// the index call, and the page is cut after it, so other users' hits never
// crowd a user's own out; total counts every match of the user.
CALL db.index.fulltext.queryNodes('entity_search', $query) YIELD node, score
WHERE node:Entity
  AND node.user_id = $userId
  AND ($includeMerged OR node.merged_into IS NULL)
  AND ($types IS NULL OR node.entity_type IN $types)
WITH node.id AS id, score
ORDER BY score DESC, id ASC
WITH collect({id: id, score: score}) AS hits
RETURN size(hits) AS total, hits[$offset..$offset + $limit] AS page
