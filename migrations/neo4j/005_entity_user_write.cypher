// The read cache of entity statistics (graph/neo4j/statscache.go) catches
// up with a user's writes by listing the entities written since the
// version it holds: each write transaction stamps the entities whose
// statistics it changes (those it puts, and both ends of the relationships
// it puts) with the user's write count (UserLock.writes) as user_write.
// Entities written before this migration have no stamp and are found by
// the full list, which every cache starts from.
CREATE INDEX entity_user_write IF NOT EXISTS
FOR (e:Entity) ON (e.user_id, e.user_write);
