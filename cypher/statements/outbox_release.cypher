// graph.Driver.ReleaseOutbox (and the second half of AckOutbox): end the
// leases of these entries. $entries is a list of {user_id, entity_id} maps;
// entries that no longer exist are ignored.
UNWIND $entries AS entry
MATCH (o:OutboxEntry {user_id: entry.user_id, entity_id: entry.entity_id})
SET o.claimed_until = null
