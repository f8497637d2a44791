-- The count of each type's unmerged entities (EntityTypeCounts: a context
-- load at scale, the entity-type completion of issue 38), from an index of
-- the unmerged entities alone by user and type, as on the embedded store
-- (migrations/sqlite/033), rather than from every entity's row.
CREATE INDEX entities_live_user_type ON entities (user_id, entity_type) WHERE merged_into IS NULL;
