-- When the remembered thing happened or was said (issue 36): a turn of a
-- conversation imported later keeps its own time, and date filters bound
-- it. Existing memories happened when they were saved.
ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET occurred_at = created_at;
ALTER TABLE memory_versions ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
UPDATE memory_versions SET occurred_at = created_at;
CREATE INDEX memories_collection_occurred ON memories (user_id, collection, occurred_at);
