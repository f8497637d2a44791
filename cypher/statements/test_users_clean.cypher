// The Neo4j conformance harness (graph/neo4j) on Community Edition, which
// has one database: before and after each test, which run one at a time
// there, delete every node of the suite's users ($userIds), with their
// relationships. Outbox entries and lock nodes carry user_id too.
MATCH (n)
WHERE n.user_id IN $userIds
DETACH DELETE n
