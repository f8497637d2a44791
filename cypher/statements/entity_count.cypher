// The total of graph.DriverTx.ListEntities, with the same filter as
// entity_list.
MATCH (e:Entity {user_id: $userId})
WHERE ($types IS NULL OR e.entity_type IN $types)
  AND ($includeMerged OR e.merged_into IS NULL)
RETURN count(e) AS total
