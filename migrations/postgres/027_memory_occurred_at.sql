-- When the remembered thing happened or was said (issue 36): a turn of a
-- conversation imported later keeps its own time, and date filters bound
-- it. Existing memories happened when they were saved. No statement
-- trigger of 026_memory_terms fires on UPDATE, so the backfill leaves the BM25
-- statistics alone.
ALTER TABLE memories ADD COLUMN occurred_at BIGINT;
UPDATE memories SET occurred_at = created_at;
ALTER TABLE memories ALTER COLUMN occurred_at SET NOT NULL;
ALTER TABLE memory_versions ADD COLUMN occurred_at BIGINT;
UPDATE memory_versions SET occurred_at = created_at;
ALTER TABLE memory_versions ALTER COLUMN occurred_at SET NOT NULL;
CREATE INDEX memories_collection_occurred ON memories (user_id, collection, occurred_at);
