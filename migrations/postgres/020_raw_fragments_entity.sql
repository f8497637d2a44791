-- Raw fields are shown wherever a snapshot is (issue 35): a listing or a
-- context load reads the fragments of the entities it shows, by entity.
CREATE INDEX raw_fragments_entity ON raw_fragments (user_id, entity_id);
