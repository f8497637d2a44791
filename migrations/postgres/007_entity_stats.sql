-- A covering index for graph.DriverTx.ListEntityStats: get_user_context
-- ranks every entity of a user from these columns, in this order, and an
-- index-only scan leaves the snapshots (TOAST or not) unread. It serves
-- every query entities_user_recent served, so it replaces it.
CREATE INDEX entities_user_stats ON entities (user_id, last_observation_at DESC, id)
    INCLUDE (entity_type, canonical_name, observation_count, merged_into);
DROP INDEX entities_user_recent;
