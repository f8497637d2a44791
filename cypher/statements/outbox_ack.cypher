// The first half of graph.Driver.AckOutbox: delete each claimed entry whose
// seq is still the stored one. $entries is a list of {user_id, entity_id,
// seq} maps; outbox_release then frees the entries enqueued again since.
UNWIND $entries AS entry
MATCH (o:OutboxEntry {user_id: entry.user_id, entity_id: entry.entity_id})
WHERE o.seq = entry.seq
DELETE o
