// graph.Eraser.Erase: the observations of $observationIds, the raw
// fragments and timeline events of the entities of $entityIds or of the
// sources of $sourceIds, the entities' identifier links (and the
// identifiers no entity is found under any more), the entities' completion
// keys (:EntityKey, which hold their names), the entities (out of the
// full-text index with their nodes) and the sources. Each count is taken
// before the next match, so that one empty match does not end the rest.
OPTIONAL MATCH (o:Observation {user_id: $userId})
WHERE o.id IN $observationIds
DETACH DELETE o
WITH count(o) AS observations
OPTIONAL MATCH (f:RawFragment {user_id: $userId})
WHERE f.entity_id IN $entityIds OR f.source_id IN $sourceIds
DETACH DELETE f
WITH observations, count(f) AS fragments
OPTIONAL MATCH (ev:TimelineEvent {user_id: $userId})
WHERE ev.entity_id IN $entityIds OR ev.source_id IN $sourceIds
DETACH DELETE ev
WITH observations, fragments, count(ev) AS events
OPTIONAL MATCH (e:Entity {user_id: $userId})-[link:IDENTIFIED_BY]->(i:Identifier)
WHERE e.id IN $entityIds
DELETE link
WITH observations, fragments, events, count(link) AS identifiers, collect(DISTINCT i) AS idents
FOREACH (i IN [x IN idents WHERE NOT EXISTS { MATCH (x)<-[:IDENTIFIED_BY]-(:Entity) }] | DELETE i)
WITH observations, fragments, events, identifiers
OPTIONAL MATCH (k:EntityKey {user_id: $userId})
WHERE k.entity_id IN $entityIds
DELETE k
WITH observations, fragments, events, identifiers, count(k) AS entityKeys
OPTIONAL MATCH (e:Entity {user_id: $userId})
WHERE e.id IN $entityIds
DETACH DELETE e
WITH observations, fragments, events, identifiers, count(e) AS entities
OPTIONAL MATCH (s:Source {user_id: $userId})
WHERE s.id IN $sourceIds
DETACH DELETE s
WITH observations, fragments, events, identifiers, entities, count(s) AS sources
OPTIONAL MATCH (l:UserLock {user_id: $userId})
SET l.epoch = randomUUID()
RETURN observations, fragments, events, identifiers, entities, sources
