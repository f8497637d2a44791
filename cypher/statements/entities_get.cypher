// graph.DriverTx.Entities: the entities of these ids that exist, as one
// row holding a list (a context load's keyword scan reads up to a
// thousand, a traversal hundreds, and Bolt pays per record), each entity a
// list of its properties in the order of the driver's entityColumns (a
// list costs Neo4j less to send than a map, whose keys it repeats); the
// driver puts them in the order of $ids.
MATCH (e:Entity {user_id: $userId})
WHERE e.id IN $ids
RETURN collect([
  e.id, e.user_id, e.entity_type, e.canonical_name, e.schema_version, e.snapshot_json,
  e.provenance_json, e.observation_count, e.last_observation_at, e.created_at,
  e.computed_at, e.merged_into, e.merged_at
]) AS entities
