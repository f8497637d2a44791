-- Entity embeddings kept current through an outbox.
--
-- graph_outbox names the entities whose snapshot changed and whose embedding
-- must be rebuilt. A row is written in the same transaction as the graph
-- change (graph.DriverTx.EnqueueOutbox), so that a crash between the graph
-- write and the embedding write leaves it for the next start to drain. One
-- row per entity: enqueueing again bumps seq, so that an acknowledgement of
-- an older claim does not delete a change made while it was processed.
-- claimed_until is the lease of the worker that claimed it (NULL: free).
-- Times are Unix microseconds.
CREATE TABLE graph_outbox (
    user_id       TEXT NOT NULL,
    entity_id     TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    enqueued_at   INTEGER NOT NULL,
    claimed_until INTEGER,
    PRIMARY KEY (user_id, entity_id)
);

CREATE INDEX graph_outbox_ready ON graph_outbox (enqueued_at, user_id, entity_id);

-- Entities that existed before this migration get their embedding at the
-- first start after it (enqueued_at 0: before anything enqueued later).
INSERT INTO graph_outbox (user_id, entity_id, seq, enqueued_at)
    SELECT user_id, id, 1, 0 FROM entities WHERE merged_into IS NULL;

-- One embedding per entity (knowledge/entityembed.go says of what text),
-- with the space it belongs to: the embedder's name and the dimension.
-- text_hash is the SHA-256 of the embedded text, so that a change that
-- leaves the text as it was is not embedded again. embedding is the vector
-- as little-endian float32s.
CREATE TABLE entity_embeddings (
    user_id    TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    embedder   TEXT NOT NULL,
    dimension  INTEGER NOT NULL,
    text_hash  TEXT NOT NULL,
    embedding  BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, entity_id)
);
