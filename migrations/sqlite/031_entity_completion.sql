-- Completion of entity names and ids (graph.EntityCompleter, issue 38):
-- entity_keys holds the keys of every unmerged entity (graph/complete.go):
-- its name key and inner keys, which the driver computes in Go (Unicode
-- lower-casing and word splitting, which SQLite's lower() cannot do) and
-- writes with the entity as a JSON array (entities.name_keys), and its
-- id. The primary key orders them by user, type, kind and key, so that a
-- completion reads the first few keys of each type the caller may read
-- that begin with what was typed, and no more: not every match, and
-- nothing of the types it may not read.
--
-- Triggers on entities keep the table current, as those of
-- entity_search do (migration 009): only a change of the keys, the type,
-- the user or whether the entity is merged rewrites them. Rows written
-- before this migration have no name_keys; their ids are keyed here, and
-- their names once the process has given them their keys at start, with
-- their text signatures (graph.BackfillTextSigs), which this migration
-- clears for that purpose.
ALTER TABLE entities ADD COLUMN name_keys TEXT;

CREATE TABLE entity_keys (
    user_id     TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    kind        INTEGER NOT NULL,
    key         TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    PRIMARY KEY (user_id, entity_type, kind, key, entity_id)
) WITHOUT ROWID;

CREATE TRIGGER entity_keys_insert AFTER INSERT ON entities WHEN new.merged_into IS NULL BEGIN
    INSERT OR IGNORE INTO entity_keys (user_id, entity_type, kind, key, entity_id)
        SELECT new.user_id, new.entity_type, 2, new.id, new.id
        UNION ALL
        SELECT new.user_id, new.entity_type, min(j.key, 1), j.value, new.id
        FROM json_each(coalesce(new.name_keys, '[]')) AS j;
END;

CREATE TRIGGER entity_keys_update AFTER UPDATE ON entities
WHEN old.name_keys IS NOT new.name_keys OR old.user_id IS NOT new.user_id OR old.entity_type IS NOT new.entity_type
  OR (old.merged_into IS NULL) IS NOT (new.merged_into IS NULL) BEGIN
    DELETE FROM entity_keys WHERE user_id = old.user_id AND entity_type = old.entity_type AND kind = 2
        AND key = old.id AND entity_id = old.id;
    DELETE FROM entity_keys WHERE user_id = old.user_id AND entity_type = old.entity_type AND kind IN (0, 1)
        AND key IN (SELECT value FROM json_each(coalesce(old.name_keys, '[]'))) AND entity_id = old.id;
    INSERT OR IGNORE INTO entity_keys (user_id, entity_type, kind, key, entity_id)
        SELECT new.user_id, new.entity_type, 2, new.id, new.id WHERE new.merged_into IS NULL
        UNION ALL
        SELECT new.user_id, new.entity_type, min(j.key, 1), j.value, new.id
        FROM json_each(coalesce(new.name_keys, '[]')) AS j WHERE new.merged_into IS NULL;
END;

CREATE TRIGGER entity_keys_delete AFTER DELETE ON entities BEGIN
    DELETE FROM entity_keys WHERE user_id = old.user_id AND entity_type = old.entity_type AND kind = 2
        AND key = old.id AND entity_id = old.id;
    DELETE FROM entity_keys WHERE user_id = old.user_id AND entity_type = old.entity_type AND kind IN (0, 1)
        AND key IN (SELECT value FROM json_each(coalesce(old.name_keys, '[]'))) AND entity_id = old.id;
END;

-- Entities stored before this migration: their ids now, their names with
-- their signatures.
INSERT INTO entity_keys (user_id, entity_type, kind, key, entity_id)
    SELECT user_id, entity_type, 2, id, id FROM entities WHERE merged_into IS NULL;
UPDATE entities SET text_sig = NULL;
