// Test harnesses (graph/neo4j/neo4jtest), on a server whose one database a
// test has just taken: delete every node but the migration runner's
// bookkeeping, with their relationships, so that the test starts on an
// empty graph whose constraints and indexes are in place.
MATCH (n)
WHERE NOT n:CairnMigration AND NOT n:CairnMigrationLock
DETACH DELETE n
