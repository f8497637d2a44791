// graph.DriverTx.LockUser: written first in a write transaction that
// changes the graph's structure. Writing the user's lock node takes Neo4j's
// exclusive lock on it until the transaction ends, so that the user's
// writers run one at a time and a cycle check and the edge it guards are
// atomic. MERGE is safe under concurrency because UserLock.user_id is
// unique (migrations/neo4j/001).
// l.writes and l.epoch are the version of the user's graph that read
// caches key on (user_version); the transaction stamps what it writes
// with the count it returns (user_write).
MERGE (l:UserLock {user_id: $userId})
  ON CREATE SET l.writes = 0, l.epoch = randomUUID()
SET l.writes = l.writes + 1
RETURN l.writes AS writes
