// graph.TextSigBackfiller: stores each row's text signature on its entity,
// unless the entity has one by now (a write in between stored its own,
// made from the text it wrote).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.text_sig IS NULL
SET e.text_sig = row.text_sig
