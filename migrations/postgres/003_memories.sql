-- Memories on PostgreSQL: free-text notes and insights with their
-- embeddings (pgvector) and a generated tsvector for full text. Every row
-- carries user_id and every query filters on it. Times are Unix
-- microseconds, as in the rest of the schema.

-- The embedding space of each collection: the embedder that made its
-- vectors and their dimension, recorded with its first memory.
CREATE TABLE memory_spaces (
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    embedder   TEXT NOT NULL,
    dimension  INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, collection)
);

-- embedding has no fixed dimension, since collections may use different
-- embedders; dimension repeats its length so that the HNSW indexes, one
-- per dimension, can be partial on it.
CREATE TABLE memories (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL,
    tags       TEXT[] NOT NULL DEFAULT '{}',
    confidence DOUBLE PRECISION,
    metadata   JSONB NOT NULL DEFAULT '{}',
    entity_ids TEXT[] NOT NULL DEFAULT '{}',
    source_id  TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    dimension  INTEGER NOT NULL,
    embedding  vector NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('english', title || ' ' || text)) STORED,
    CHECK (vector_dims(embedding) = dimension)
);

CREATE INDEX memories_collection_created ON memories (user_id, collection, created_at DESC, id);
CREATE INDEX memories_source ON memories (user_id, source_id);
CREATE INDEX memories_tags ON memories USING gin (tags);
CREATE INDEX memories_entities ON memories USING gin (entity_ids);
CREATE INDEX memories_tsv ON memories USING gin (tsv);

-- The index of the local embedder's dimension; vector/pgvector creates the
-- index of any other dimension when a collection first records it.
CREATE INDEX memories_hnsw_384 ON memories USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dimension = 384;
