// Empties a scratch database in batches: deletes up to $limit nodes other
// than the migration runner's bookkeeping, with their relationships, and
// says how many it deleted; the caller repeats until none is left. The
// constraints and indexes stay. Used by `cairn bench` on a Neo4j database
// it was given empty, and by the test harnesses (graph/neo4j/neo4jtest)
// before a test takes a server's one database.
MATCH (n)
WHERE NOT n:CairnMigration AND NOT n:CairnMigrationLock
WITH n
LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
