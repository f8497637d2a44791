// graph.Exporter.EntitiesIdentifiers: the identifiers of the entities of
// $entityIds, one row per (entity, field, value); the driver groups and
// orders them.
MATCH (e:Entity {user_id: $userId})-[link:IDENTIFIED_BY]->(i:Identifier {user_id: $userId})
WHERE e.id IN $entityIds
RETURN e.id AS entity_id, link.field AS field, i.value AS value
