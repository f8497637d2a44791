// graph.TextSigBackfiller: stores each row's text signature on its entity,
// unless the entity has one by now (a write in between stored its own,
// made from the text it wrote). A signature is part of what
// ListEntityStats lists, so the version of each user whose entities
// changed moves on (user_version), as a write transaction's would.
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.text_sig IS NULL
SET e.text_sig = row.text_sig
WITH DISTINCT e.user_id AS userId
MATCH (l:UserLock {user_id: userId})
SET l.writes = l.writes + 1
