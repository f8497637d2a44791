// graph.DriverTx.SetEntityIdentifiers (SetIdentifiers is a batch of one):
// each entity of $rows, maps {entity_id, identifiers: [{field, value}]},
// loses its identifiers and gets those of its row. One Identifier node per
// (user, value), shared by every entity found under it, so that Neo4j
// Browser shows which entities share an email or a tax id; the identifier
// nodes no entity is found under any more are deleted. The aggregation
// after the deletes ends them before any identifier is added, and the one
// after the additions ends them before the orphans are looked for.
UNWIND $rows AS row
MATCH (e:Entity {user_id: $userId, id: row.entity_id})
OPTIONAL MATCH (e)-[old:IDENTIFIED_BY]->(dropped:Identifier {user_id: $userId})
DELETE old
WITH e, row, collect(dropped) AS dropped
FOREACH (ident IN row.identifiers |
  MERGE (i:Identifier {user_id: $userId, value: ident.value})
  MERGE (e)-[link:IDENTIFIED_BY {field: ident.field}]->(i)
    ON CREATE SET link.user_id = $userId
)
WITH collect(dropped) AS droppedPerEntity
UNWIND droppedPerEntity AS dropped
UNWIND dropped AS i
WITH DISTINCT i
WHERE NOT EXISTS { (i)<-[:IDENTIFIED_BY]-(:Entity) }
DELETE i
