-- Completion of entity names and ids (graph.EntityCompleter, issue 38), as
-- the embedded store keeps it (migrations/sqlite/031): entity_keys holds
-- the keys of every unmerged entity (graph/complete.go): its name key and
-- inner keys, which the driver computes in Go (Unicode lower-casing and
-- word splitting: lower() under the C locale folds ASCII only) and writes
-- with the entity (entities.name_keys, name key first), and its id. The
-- primary key orders them by user, type, kind and key, as bytes (COLLATE
-- "C"), so that a completion reads the first few keys of each type the
-- caller may read that begin with what was typed, and no more: not every
-- match, and nothing of the types it may not read.
--
-- Triggers on entities keep the table current, whatever writes the rows
-- (PutEntities' upsert, a merge, an erasure's DELETE, an import): only a
-- change of the keys, the type, the user or whether the entity is merged
-- rewrites them. Rows written before this migration have no name_keys;
-- their ids are keyed here, and their names once the process has given
-- them their keys at start, with their text signatures
-- (graph.BackfillTextSigs), which this migration clears for that purpose.
ALTER TABLE entities ADD COLUMN name_keys TEXT[];

CREATE TABLE entity_keys (
    user_id     TEXT COLLATE "C" NOT NULL,
    entity_type TEXT COLLATE "C" NOT NULL,
    kind        SMALLINT NOT NULL,
    key         TEXT COLLATE "C" NOT NULL,
    entity_id   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, entity_type, kind, key, entity_id)
);

CREATE FUNCTION cairn_entity_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM entity_keys WHERE user_id = OLD.user_id AND entity_type = OLD.entity_type
            AND kind = 2 AND key = OLD.id AND entity_id = OLD.id;
        DELETE FROM entity_keys WHERE user_id = OLD.user_id AND entity_type = OLD.entity_type
            AND kind IN (0, 1) AND key = ANY (coalesce(OLD.name_keys, '{}')) AND entity_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.merged_into IS NULL THEN
        INSERT INTO entity_keys (user_id, entity_type, kind, key, entity_id)
            SELECT NEW.user_id, NEW.entity_type, 2, NEW.id, NEW.id
            UNION ALL
            SELECT NEW.user_id, NEW.entity_type, least(k.n - 1, 1), k.key, NEW.id
            FROM unnest(coalesce(NEW.name_keys, '{}')) WITH ORDINALITY AS k(key, n)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER entity_keys_insert AFTER INSERT ON entities
    FOR EACH ROW WHEN (NEW.merged_into IS NULL) EXECUTE FUNCTION cairn_entity_keys();
CREATE TRIGGER entity_keys_update AFTER UPDATE ON entities
    FOR EACH ROW WHEN (OLD.name_keys IS DISTINCT FROM NEW.name_keys OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.entity_type IS DISTINCT FROM NEW.entity_type OR OLD.id IS DISTINCT FROM NEW.id
        OR (OLD.merged_into IS NULL) IS DISTINCT FROM (NEW.merged_into IS NULL))
    EXECUTE FUNCTION cairn_entity_keys();
CREATE TRIGGER entity_keys_delete AFTER DELETE ON entities
    FOR EACH ROW EXECUTE FUNCTION cairn_entity_keys();

-- Entities stored before this migration: their ids now, their names with
-- their signatures.
INSERT INTO entity_keys (user_id, entity_type, kind, key, entity_id)
    SELECT user_id, entity_type, 2, id, id FROM entities WHERE merged_into IS NULL;
UPDATE entities SET text_sig = NULL;
