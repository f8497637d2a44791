-- Memories of the embedded store: free-text notes and insights with their
-- embeddings, searched by vector similarity (an exact scan, see
-- vector/embedded) and by full text (FTS5). Every row carries user_id and
-- every query filters on it. Times are Unix microseconds.

-- The embedding space of each collection: the embedder that made its
-- vectors and their dimension, recorded with its first memory.
CREATE TABLE memory_spaces (
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    embedder   TEXT NOT NULL,
    dimension  INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, collection)
);

-- seq orders rows for the in-process vector cache: a reader loads only the
-- rows with a seq above the highest it holds.
CREATE TABLE memories (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    user_id    TEXT NOT NULL,
    collection TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL,
    tags       TEXT NOT NULL DEFAULT '[]',
    confidence REAL,
    metadata   TEXT NOT NULL DEFAULT '{}',
    entity_ids TEXT NOT NULL DEFAULT '[]',
    source_id  TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    -- little-endian float32s
    embedding  BLOB NOT NULL
);

CREATE INDEX memories_collection_seq ON memories (user_id, collection, seq);
CREATE INDEX memories_collection_created ON memories (user_id, collection, created_at DESC, id);
CREATE INDEX memories_source ON memories (user_id, source_id);

-- Tags and entity links, one row each, so that their filters are index
-- lookups rather than JSON scans.
CREATE TABLE memory_tags (
    user_id TEXT NOT NULL,
    tag     TEXT NOT NULL,
    seq     INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    PRIMARY KEY (user_id, tag, seq)
) WITHOUT ROWID;

CREATE TABLE memory_entities (
    user_id   TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    seq       INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    PRIMARY KEY (user_id, entity_id, seq)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    title, text,
    content = 'memories', content_rowid = 'seq',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, text) VALUES (new.seq, new.title, new.text);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, text) VALUES ('delete', old.seq, old.title, old.text);
END;
