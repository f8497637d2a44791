// graph.DriverTx.PutEntity: insert the entity or replace the stored one.
// $snapshotProps holds the snapshot fields that Neo4j can store as
// properties (scalars and lists of one scalar type), without the names of
// the fields below; snapshot_json stays the whole truth. SET e = … drops
// the properties of fields the snapshot no longer has. An entity of the
// same id but another user is left alone (no row back).
MERGE (e:Entity {id: $id})
  ON CREATE SET e.user_id = $userId
WITH e
WHERE e.user_id = $userId
SET e = $snapshotProps,
    e.id = $id,
    e.user_id = $userId,
    e.entity_type = $entityType,
    e.canonical_name = $canonicalName,
    e.schema_version = $schemaVersion,
    e.snapshot_json = $snapshotJson,
    e.provenance_json = $provenanceJson,
    e.observation_count = $observationCount,
    e.last_observation_at = $lastObservationAt,
    e.created_at = $createdAt,
    e.computed_at = $computedAt,
    e.merged_into = $mergedInto,
    e.merged_at = $mergedAt,
    e:__LABEL__
RETURN e.id AS id
