// graph.Driver.ClaimOutbox, for every user: lease up to $limit free entries
// (never claimed, or whose lease ended by $now) until $until, oldest first.
// Writing o.locked takes each candidate's exclusive lock; the lease is then
// read again, since a concurrent claimer may have taken the entry while
// this one waited for the lock. Neo4j reads committed data, so the second
// read sees its lease and skips the entry: two claimers never return the
// same entry.
MATCH (o:OutboxEntry)
WHERE o.claimed_until IS NULL OR o.claimed_until <= $now
WITH o
ORDER BY o.enqueued_at, o.user_id, o.entity_id
LIMIT $limit
SET o.locked = true
WITH o
WHERE o.claimed_until IS NULL OR o.claimed_until <= $now
SET o.claimed_until = $until
REMOVE o.locked
RETURN o.user_id AS user_id, o.entity_id AS entity_id, o.seq AS seq, o.enqueued_at AS enqueued_at
ORDER BY enqueued_at, user_id, entity_id
