-- Entity embeddings as 8-bit vectors. They are a cache of what the embedder
-- computes from an entity's text (knowledge/entityembed.go), now kept packed
-- (vector.PackInt8: a float32 scale, then one signed byte per dimension)
-- in a bytea: about a quarter of a float32 vector, half a halfvec. Nothing
-- searches them in SQL (ranking reads them by entity id), so they need no
-- vector type. They are rebuilt rather than converted, so that every stored
-- vector is packed by the one Go encoder: the table is emptied and every
-- live entity enqueued, as in 006; the outbox worker rebuilds them at the
-- next start, and until then ranking embeds what it misses, as it always
-- does.
DROP TABLE entity_embeddings;

CREATE TABLE entity_embeddings (
    user_id    TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    embedder   TEXT NOT NULL,
    dimension  INTEGER NOT NULL,
    text_hash  TEXT NOT NULL,
    embedding  BYTEA NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, entity_id),
    CHECK (length(embedding) = dimension + 4)
);

INSERT INTO graph_outbox (user_id, entity_id, seq, enqueued_at)
    SELECT user_id, id, 1, 'epoch'::timestamptz FROM entities WHERE merged_into IS NULL
    ON CONFLICT (user_id, entity_id) DO NOTHING;
