// graph.DriverTx.PutRelationships: relationship_put for each row of $rows,
// all of one user and of the type that fills __REL_TYPE__ (the driver runs
// one statement per user and type). A row whose endpoint is not an entity
// of the user writes nothing: fewer written than rows means graph.ErrNotFound.
// The driver refuses an (id, created_at) given twice before running it.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $userId, id: row.source_entity_id})
MATCH (t:Entity {user_id: $userId, id: row.target_entity_id})
MERGE (s)-[r:__REL_TYPE__ {id: row.id, created_at: row.created_at}]->(t)
SET r = row.metadata_props,
    r.id = row.id,
    r.user_id = $userId,
    r.created_at = row.created_at,
    r.metadata_json = row.metadata_json,
    r.provenance_json = row.provenance_json,
    r.observation_count = row.observation_count,
    r.last_observation_at = row.last_observation_at,
    r.ended_at = row.ended_at,
    s.user_write = $userWrite,
    t.user_write = $userWrite
RETURN count(r) AS written
