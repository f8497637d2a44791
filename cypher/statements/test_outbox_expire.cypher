// The split deployment's crash test (cmd/cairn): the process that claimed
// these outbox entries was killed, so their leases are moved into the past,
// as time would move them once graph.OutboxClaim's Lease had passed; the
// next claim by a live worker takes them, through the real recovery path.
MATCH (o:OutboxEntry)
WHERE o.claimed_until IS NOT NULL
SET o.claimed_until = $past
RETURN count(o) AS expired
