// The versions of the Neo4j migrations already applied.
MATCH (m:CairnMigration)
RETURN m.version AS version
ORDER BY version
