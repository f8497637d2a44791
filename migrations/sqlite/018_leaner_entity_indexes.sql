-- Two tables of every entity written lose what nothing reads.
--
-- entities_user_stats, the covering index of ListEntityStats (migrations
-- 007 and 016), no longer carries canonical_name, which graph.EntityStat
-- dropped: a context load walks the whole index for a user, and the names
-- were a fifth of its bytes.
--
-- entity_identifiers is clustered on its primary key (WITHOUT ROWID). As a
-- rowid table it stored every identifier twice, in the table and in the
-- primary key's index, which holds all four columns, and every store
-- wrote both b-trees; the table was never read by rowid.
DROP INDEX entities_user_stats;
CREATE INDEX entities_user_stats ON entities
    (user_id, last_observation_at DESC, id, entity_type, observation_count, merged_into, text_sig);

CREATE TABLE entity_identifiers_clustered (
    user_id   TEXT NOT NULL,
    value     TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    field     TEXT NOT NULL,
    PRIMARY KEY (user_id, value, entity_id, field)
) WITHOUT ROWID;
INSERT INTO entity_identifiers_clustered (user_id, value, entity_id, field)
    SELECT user_id, value, entity_id, field FROM entity_identifiers;
DROP TABLE entity_identifiers;
ALTER TABLE entity_identifiers_clustered RENAME TO entity_identifiers;
CREATE INDEX entity_identifiers_user_entity ON entity_identifiers (user_id, entity_id);
