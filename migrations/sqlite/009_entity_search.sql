-- Full-text search over entities (graph.EntitySearcher, docs/graph.md).
--
-- entity_search is an FTS5 index of every entity's canonical name (column
-- name) and the string and number values of its snapshot, nested ones
-- included (column body). The identifiers an entity is found under
-- (entity_identifiers) are normalised copies of its name and of snapshot
-- fields, so indexing those indexes them too, in one row per entity.
-- unicode61 splits on every character that is not a letter, digit or mark
-- and lower-cases: "Quill 004216" gives quill and 004216, "bob@acme.com"
-- bob, acme and com. Diacritics are kept (café is not cafe), as on
-- PostgreSQL. The index is contentless: it stores no copy of the text.
--
-- An FTS5 row is addressed by an integer; entities have text ids and an
-- implicit rowid that VACUUM may renumber, so entity_search_docs gives each
-- entity a stable integer (doc) and holds what a search filters on (user,
-- type, merged), which the index cannot return, without reading entity
-- rows and their snapshots.
--
-- Triggers on entities keep both current, whatever writes the entities
-- (one row or many, INSERT or UPSERT): the text is indexed again only when
-- the name or the snapshot changed. They cost a write some 100-150 us per
-- new or changed entity on the 2-core build machine, most of it FTS5's
-- own (docs/performance.md, "Entity search").
CREATE TABLE entity_search_docs (
    doc         INTEGER PRIMARY KEY,
    entity_id   TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    merged      INTEGER NOT NULL
);

CREATE VIRTUAL TABLE entity_search USING fts5 (
    name, body,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);

-- A new entity gets a new doc (a stale one, of an entity deleted without
-- its trigger, is replaced: its orphaned text can no longer be joined).
CREATE TRIGGER entity_search_insert AFTER INSERT ON entities BEGIN
    INSERT OR REPLACE INTO entity_search_docs (entity_id, user_id, entity_type, merged)
        VALUES (new.id, new.user_id, new.entity_type, new.merged_into IS NOT NULL);
    INSERT INTO entity_search (rowid, name, body) VALUES (
        last_insert_rowid(),
        new.canonical_name,
        (SELECT group_concat(atom, ' ') FROM json_tree(new.snapshot) WHERE type IN ('text', 'integer', 'real')));
END;

-- One trigger for both kinds of change, so that an upsert that changes
-- neither (most rewrites of an entity by the reducer) costs one test.
CREATE TRIGGER entity_search_update AFTER UPDATE ON entities
WHEN old.canonical_name IS NOT new.canonical_name OR old.snapshot IS NOT new.snapshot
  OR old.user_id IS NOT new.user_id OR old.entity_type IS NOT new.entity_type
  OR (old.merged_into IS NULL) IS NOT (new.merged_into IS NULL) BEGIN
    UPDATE entity_search_docs
        SET user_id = new.user_id, entity_type = new.entity_type, merged = new.merged_into IS NOT NULL
        WHERE entity_id = new.id;
    DELETE FROM entity_search
        WHERE (old.canonical_name IS NOT new.canonical_name OR old.snapshot IS NOT new.snapshot)
          AND rowid = (SELECT doc FROM entity_search_docs WHERE entity_id = new.id);
    INSERT INTO entity_search (rowid, name, body)
        SELECT doc, new.canonical_name,
            (SELECT group_concat(atom, ' ') FROM json_tree(new.snapshot) WHERE type IN ('text', 'integer', 'real'))
        FROM entity_search_docs
        WHERE (old.canonical_name IS NOT new.canonical_name OR old.snapshot IS NOT new.snapshot)
          AND entity_id = new.id;
END;

CREATE TRIGGER entity_search_delete AFTER DELETE ON entities BEGIN
    DELETE FROM entity_search WHERE rowid = (SELECT doc FROM entity_search_docs WHERE entity_id = old.id);
    DELETE FROM entity_search_docs WHERE entity_id = old.id;
END;

-- Entities stored before this migration.
INSERT INTO entity_search_docs (entity_id, user_id, entity_type, merged)
    SELECT id, user_id, entity_type, merged_into IS NOT NULL FROM entities ORDER BY id;
INSERT INTO entity_search (rowid, name, body)
    SELECT d.doc, e.canonical_name,
        (SELECT group_concat(atom, ' ') FROM json_tree(e.snapshot) WHERE type IN ('text', 'integer', 'real'))
    FROM entities e JOIN entity_search_docs d ON d.entity_id = e.id;
