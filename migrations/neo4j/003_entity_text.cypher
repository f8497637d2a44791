// The full-text index of entity search (cypher/entity_search): entity names
// and the values they are identified by. It holds every user's nodes; the
// statement that queries it filters by user_id.
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS
FOR (n:Entity|Identifier) ON EACH [n.canonical_name, n.value];
