// The version of a user's graph that the driver's read cache keys on (see
// graph/neo4j/statscache.go): the epoch of the user's lock node, set when
// the node is created, so that a database emptied and written again never
// repeats a version, and the count of the write transactions that took the
// lock, which every write transaction increments (user_lock). No row
// property is null but for a user who never wrote, or a lock node written
// before epochs were kept.
OPTIONAL MATCH (l:UserLock {user_id: $userId})
RETURN l.epoch AS epoch, l.writes AS writes
