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
-- the name or the snapshot changed.
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

CREATE TRIGGER entity_search_insert AFTER INSERT ON entities BEGIN
    INSERT INTO entity_search_docs (entity_id, user_id, entity_type, merged)
        VALUES (new.id, new.user_id, new.entity_type, new.merged_into IS NOT NULL)
        ON CONFLICT (entity_id) DO UPDATE SET
            user_id = excluded.user_id, entity_type = excluded.entity_type, merged = excluded.merged;
    DELETE FROM entity_search WHERE rowid = (SELECT doc FROM entity_search_docs WHERE entity_id = new.id);
    INSERT INTO entity_search (rowid, name, body) VALUES (
        (SELECT doc FROM entity_search_docs WHERE entity_id = new.id),
        new.canonical_name,
        (SELECT group_concat(atom, ' ') FROM json_tree(new.snapshot) WHERE type IN ('text', 'integer', 'real')));
END;

CREATE TRIGGER entity_search_text AFTER UPDATE OF canonical_name, snapshot ON entities
WHEN old.canonical_name IS NOT new.canonical_name OR old.snapshot IS NOT new.snapshot BEGIN
    DELETE FROM entity_search WHERE rowid = (SELECT doc FROM entity_search_docs WHERE entity_id = new.id);
    INSERT INTO entity_search (rowid, name, body) VALUES (
        (SELECT doc FROM entity_search_docs WHERE entity_id = new.id),
        new.canonical_name,
        (SELECT group_concat(atom, ' ') FROM json_tree(new.snapshot) WHERE type IN ('text', 'integer', 'real')));
END;

CREATE TRIGGER entity_search_filters AFTER UPDATE OF user_id, entity_type, merged_into ON entities
WHEN old.user_id IS NOT new.user_id OR old.entity_type IS NOT new.entity_type
  OR (old.merged_into IS NULL) IS NOT (new.merged_into IS NULL) BEGIN
    UPDATE entity_search_docs
        SET user_id = new.user_id, entity_type = new.entity_type, merged = new.merged_into IS NOT NULL
        WHERE entity_id = new.id;
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
