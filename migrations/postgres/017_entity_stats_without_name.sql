-- entities_user_stats, the covering index of ListEntityStats (migrations
-- 007 and 016), no longer carries canonical_name, which graph.EntityStat
-- dropped: a context load reads the whole index for a user, and the names
-- were a fifth of its bytes.
DROP INDEX entities_user_stats;
CREATE INDEX entities_user_stats ON entities (user_id, last_observation_at DESC, id)
    INCLUDE (entity_type, observation_count, merged_into, text_sig);
