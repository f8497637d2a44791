// Entity search scoped in the index (graph/neo4j/search.go): the index of
// 004 held only the words, so Lucene found every user's and every type's
// matches and the statement then read each node to keep the caller's own
// (3,000 nodes read for a completion that kept 10, docs/performance.md).
// entity_search_scoped also holds each entity's user_id and entity_type,
// and the driver requires them in the query (as phrases with boost 0, so
// that they filter without changing a hit's score); the statement still
// checks both. The whitespace analyzer keeps a user id or a type one token
// per run of non-space characters, as a phrase in the query does.
// The new index is populated before the old one is dropped, and this
// migration waits for it, so that no search runs against an index that is
// not online.
CREATE FULLTEXT INDEX entity_search_scoped IF NOT EXISTS
FOR (e:Entity) ON EACH [e.search_name, e.search_text, e.user_id, e.entity_type]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};

CALL db.awaitIndex('entity_search_scoped', 3600);

DROP INDEX entity_search IF EXISTS;
