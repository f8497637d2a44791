-- Forgetting memories (issue 37, see docs/forgetting.md).
--
-- memory_versions keeps what no longer counts but is not erased: retracted
-- memories and the content updates replaced, with who, when and why. Rows
-- here are in no read path: searches, listings and counts read memories.
CREATE TABLE memory_versions (
    vseq       BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL,
    tags       TEXT[] NOT NULL DEFAULT '{}',
    confidence DOUBLE PRECISION,
    metadata   JSONB NOT NULL DEFAULT '{}',
    entity_ids TEXT[] NOT NULL DEFAULT '{}',
    source_id  TEXT NOT NULL DEFAULT '',
    types      TEXT[] NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    embedding  vector NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('retracted', 'superseded')),
    removed_at BIGINT NOT NULL,
    actor      TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memory_versions_id ON memory_versions (user_id, id, removed_at);

-- What remains of an erased memory: no content.
CREATE TABLE memory_tombstones (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    erased_at  BIGINT NOT NULL,
    actor      TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memory_tombstones_user ON memory_tombstones (user_id, id);
