-- Entity embeddings as 8-bit vectors. They are a cache of what the embedder
-- computes from an entity's text (knowledge/entityembed.go), now kept packed
-- (vector.PackInt8: a float32 scale, then one signed byte per dimension,
-- about a quarter of the float32s) in a table clustered on its key, which
-- no longer stores user and entity id twice. The float32 vectors cannot be
-- converted in SQL, so they are dropped and every live entity is enqueued,
-- as in 006: the outbox worker rebuilds them in the new form at the next
-- start, and until then ranking embeds what it misses, as it always does.
DROP TABLE entity_embeddings;

CREATE TABLE entity_embeddings (
    user_id    TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    embedder   TEXT NOT NULL,
    dimension  INTEGER NOT NULL,
    text_hash  TEXT NOT NULL,
    embedding  BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, entity_id)
) WITHOUT ROWID;

INSERT INTO graph_outbox (user_id, entity_id, seq, enqueued_at)
    SELECT user_id, id, 1, 0 FROM entities WHERE merged_into IS NULL
    ON CONFLICT (user_id, entity_id) DO NOTHING;
