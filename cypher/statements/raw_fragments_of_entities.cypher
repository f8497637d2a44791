// graph.DriverTx.RawFragments of some entities: the user's raw fragments
// recorded for the entities $entityIds, of one entity type unless
// $entityType is empty, ordered by id. One index seek per entity
// (raw_fragment_entity), where raw_fragments_list scans the user's.
UNWIND $entityIds AS entityId
MATCH (f:RawFragment {user_id: $userId, entity_id: entityId})
WHERE $entityType = '' OR f.entity_type = $entityType
RETURN f {
  .id, .user_id, .source_id, .entity_id, .entity_type, .field, .value_json, .created_at
} AS fragment
ORDER BY f.id
