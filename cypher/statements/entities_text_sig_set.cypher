// graph.TextSigBackfiller: stores each row's text signature on its entity,
// unless the entity has one by now (a write in between stored its own,
// made from the text it wrote). A signature is part of what
// ListEntityStats lists, so each user whose entities changed gets a write
// of its own, as a write transaction would: the version read caches key on
// moves on (user_version), and the entities carry its count (user_write).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.text_sig IS NULL
SET e.text_sig = row.text_sig
WITH e.user_id AS userId, collect(e) AS written
MATCH (l:UserLock {user_id: userId})
SET l.writes = l.writes + 1
WITH l, written
UNWIND written AS e
SET e.user_write = l.writes
