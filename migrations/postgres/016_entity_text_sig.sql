-- Each entity's text signature (graph.TextSig: a 66-byte Bloom filter of
-- the trigrams of its type, name and top-level snapshot values), which the
-- driver computes and writes with the entity. A context load with a topic
-- reads it with the statistics it ranks by, and so knows which entities
-- cannot name the topic without reading their snapshots. The covering
-- index of ListEntityStats (migration 007) includes it, so that the scan
-- stays index-only.
--
-- Rows written before this migration have none (NULL), which says
-- nothing until the process gives them theirs at start
-- (graph.BackfillTextSigs), walking entities_text_sig_missing: an index of
-- only the entities without one, empty once that is done, since every
-- write stores a signature.
ALTER TABLE entities ADD COLUMN text_sig bytea;
DROP INDEX entities_user_stats;
CREATE INDEX entities_user_stats ON entities (user_id, last_observation_at DESC, id)
    INCLUDE (entity_type, canonical_name, observation_count, merged_into, text_sig);
CREATE INDEX entities_text_sig_missing ON entities (id) WHERE text_sig IS NULL;
