// graph.DriverTx.PutRelationship: insert the period of a relationship that
// starts at $createdAt, or replace it. Each period of existence is its own
// Neo4j relationship between the same two entities (ended_at set once it
// ends), so that as-of reads see the graph as it was. $metadataProps holds
// the metadata fields Neo4j can store as properties; metadata_json stays the
// whole truth. No row back: an endpoint is not an entity of the user
// (graph.ErrNotFound).
MATCH (s:Entity {user_id: $userId, id: $sourceEntityId})
MATCH (t:Entity {user_id: $userId, id: $targetEntityId})
MERGE (s)-[r:__REL_TYPE__ {id: $id, created_at: $createdAt}]->(t)
SET r = $metadataProps,
    r.id = $id,
    r.user_id = $userId,
    r.created_at = $createdAt,
    r.metadata_json = $metadataJson,
    r.provenance_json = $provenanceJson,
    r.observation_count = $observationCount,
    r.last_observation_at = $lastObservationAt,
    r.ended_at = $endedAt,
    s.user_write = $userWrite,
    t.user_write = $userWrite
RETURN r.id AS id
