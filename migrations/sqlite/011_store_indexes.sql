-- Indexes the store pipeline needs to stay as fast at 100,000 entities as
-- at 1,000.
--
-- Replacing an entity's identifiers deletes them by (user_id, entity_id).
-- With only entity_identifiers_entity (entity_id) beside the primary key
-- (user_id, value, …), SQLite answered that delete through the primary
-- key's user_id prefix: a walk over every identifier of the user, for every
-- entity stored. PostgreSQL has had this index since 002.
CREATE INDEX entity_identifiers_user_entity ON entity_identifiers (user_id, entity_id);
DROP INDEX entity_identifiers_entity;
