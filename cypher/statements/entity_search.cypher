// graph.EntitySearcher over the full-text index entity_search_scoped
// (migrations/neo4j/008). $query is the Lucene query the driver builds from
// the search's terms (words of letters, digits and marks only): each term
// required, in the name (boosted) or the snapshot text, the last one also
// as a prefix, and the user (and the types, when the search names them)
// required as well, so that Lucene returns the caller's own matches only.
// The filter below still checks both: the index is a pre-filter, this is
// the rule. The page is cut after it; total counts every match of the user.
CALL db.index.fulltext.queryNodes('entity_search_scoped', $query) YIELD node, score
WHERE node:Entity
  AND node.user_id = $userId
  AND ($includeMerged OR node.merged_into IS NULL)
  AND ($types IS NULL OR node.entity_type IN $types)
WITH node.id AS id, score
ORDER BY score DESC, id ASC
WITH collect({id: id, score: score}) AS hits
RETURN size(hits) AS total, hits[$offset..$offset + $limit] AS page
