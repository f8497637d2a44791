// Completion keys (graph/complete.go; graph/neo4j/complete.go): each
// unmerged entity has an :EntityKey node per key (its name key, its inner
// keys and its id), which entities_put keeps current and erase_nodes
// deletes with the entity. A key's type_order (user, type, kind, key and
// entity id, joined by U+0001, which no key holds) serves entity_complete:
// the keys of a user, type and kind that begin with a prefix are one range
// of entity_key_type_order, in the order of key then entity id, read in
// that order and cut at the limit. user_order (the same without the type)
// serves entity_complete_any, for a caller who may read every type, in one
// seek per kind. Single properties rather than composite indexes, so that
// Neo4j's planner has one index to seek and reads it in its order.
// entity_key_entity finds an entity's keys to replace or erase them.
// Entities stored before this migration have no keys until the backfill at
// start (graph.BackfillTextSigs, which finds them by their missing
// name_keys) gives them theirs.
CREATE INDEX entity_key_type_order IF NOT EXISTS
FOR (k:EntityKey) ON (k.type_order);

CREATE INDEX entity_key_user_order IF NOT EXISTS
FOR (k:EntityKey) ON (k.user_order);

CREATE INDEX entity_key_entity IF NOT EXISTS
FOR (k:EntityKey) ON (k.user_id, k.entity_id);
