-- relationships_out also covers the pass over a user's live relationships
-- that counts every entity's degrees for context loading
-- (graph.DriverTx.ListEntityStats of more than a few entities): SQLite
-- walks the index and reads no row, where it read each relationship's row,
-- metadata and provenance included (about 3 ms of a context load at
-- 10,000 entities and 3,333 relationships). The key keeps its first
-- columns, so every lookup it served it still serves.
DROP INDEX relationships_out;
CREATE INDEX relationships_out ON relationships
    (user_id, source_entity_id, relationship_type, target_entity_id, ended_at, source_type, target_type);
