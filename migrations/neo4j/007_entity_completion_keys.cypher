// Completion keys (graph/complete.go; graph/neo4j/complete.go): each
// unmerged entity has an :EntityKey node per key (its name key, its inner
// keys and its id), which entities_put keeps current and erase_nodes
// deletes with the entity. entity_key_prefix serves entity_complete: by
// user, type and kind, the keys that begin with a prefix in the order of
// key then entity id, read from the index in that order and cut at the
// limit; entity_key_user serves entity_complete_any, the same for a caller
// who may read every type, in one seek per kind rather than one per type.
// entity_key_entity finds an entity's keys to replace them.
// Entities stored before this migration have no keys until the backfill at
// start (graph.BackfillTextSigs, which finds them by their missing
// name_keys) gives them theirs.
CREATE INDEX entity_key_prefix IF NOT EXISTS
FOR (k:EntityKey) ON (k.user_id, k.entity_type, k.kind, k.key, k.entity_id);

CREATE INDEX entity_key_user IF NOT EXISTS
FOR (k:EntityKey) ON (k.user_id, k.kind, k.key, k.entity_id);

CREATE INDEX entity_key_entity IF NOT EXISTS
FOR (k:EntityKey) ON (k.user_id, k.entity_id);
