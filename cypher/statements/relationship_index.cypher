// The index relationship_get_typed needs, for a relationship type a schema
// registers (the built-in types get theirs from migrations/neo4j/002). A
// schema command: it runs in a transaction of its own, before the first
// write of the type.
CREATE INDEX rel___REL_TYPE___id IF NOT EXISTS
FOR ()-[r:__REL_TYPE__]-() ON (r.id, r.user_id)
