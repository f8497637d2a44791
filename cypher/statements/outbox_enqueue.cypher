// graph.DriverTx.EnqueueOutbox: one OutboxEntry node per (user, entity),
// written in the transaction of the change. Enqueueing again bumps seq;
// enqueued_at keeps the first time. MERGE is safe under concurrency
// because (user_id, entity_id) is unique (migrations/neo4j/001).
UNWIND $entityIds AS entityId
MERGE (o:OutboxEntry {user_id: $userId, entity_id: entityId})
  ON CREATE SET o.seq = 1, o.enqueued_at = $at
  ON MATCH SET o.seq = o.seq + 1
