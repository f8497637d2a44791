// graph.TextSigBackfiller: stores each row's text signature on its entity,
// unless the entity has one by now (a write in between stored its own,
// made from the text it wrote), and, unless it has them by now, its
// completion keys: name_keys and an :EntityKey per key of the row (none
// for a merged entity), as entities_put stores them. The driver has taken
// the lock of each user of the rows first, so that a write of the entity
// is either seen here or waits. A signature is part of what
// ListEntityStats lists, so each user whose entities changed gets a write
// of its own, as a write transaction would: the version read caches key on
// moves on (user_version), and the entities carry its count (user_write).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.text_sig IS NULL OR e.name_keys IS NULL
CALL (e, row) {
  UNWIND CASE WHEN e.name_keys IS NULL THEN row.keys ELSE [] END AS key
  CREATE (:EntityKey {user_id: e.user_id, entity_type: e.entity_type, kind: key.kind, key: key.key, entity_id: e.id,
    type_order: key.type_order, user_order: key.user_order})
}
SET e.text_sig = coalesce(e.text_sig, row.text_sig),
    e.name_keys = coalesce(e.name_keys, row.name_keys)
WITH e.user_id AS userId, collect(e) AS written
MATCH (l:UserLock {user_id: userId})
SET l.writes = l.writes + 1
WITH l, written
UNWIND written AS e
SET e.user_write = l.writes
