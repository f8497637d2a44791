// Raw fields are shown wherever a snapshot is (issue 35): a listing or a
// context load reads the fragments of the entities it shows, by entity
// (raw_fragments_of_entities).
CREATE INDEX raw_fragment_entity IF NOT EXISTS
FOR (f:RawFragment) ON (f.user_id, f.entity_id);
