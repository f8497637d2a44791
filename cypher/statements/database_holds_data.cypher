// Whether a database holds any node besides the migration runner's
// bookkeeping: `cairn bench` refuses a Neo4j database that is not empty,
// since it clears the database when it ends.
RETURN EXISTS {
  MATCH (n)
  WHERE NOT n:CairnMigration AND NOT n:CairnMigrationLock
} AS holds
