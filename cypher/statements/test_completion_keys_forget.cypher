// The Neo4j driver's test of the completion-key backfill
// (graph/neo4j TestCompletionKeysBackfill): removes the completion keys of
// the users' entities and their record (name_keys), as entities stored
// before the driver kept them have neither.
MATCH (e:Entity)
WHERE e.user_id IN $userIds
REMOVE e.name_keys
WITH count(e) AS forgotten
MATCH (k:EntityKey)
WHERE k.user_id IN $userIds
DELETE k
