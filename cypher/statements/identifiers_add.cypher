// The second half of graph.DriverTx.SetIdentifiers: one Identifier node per
// (user, value), shared by every entity found under it, so that Neo4j
// Browser shows which entities share an email or a tax id.
// $identifiers is a list of {field, value} maps.
MATCH (e:Entity {user_id: $userId, id: $entityId})
UNWIND $identifiers AS ident
MERGE (i:Identifier {user_id: $userId, value: ident.value})
MERGE (e)-[link:IDENTIFIED_BY {field: ident.field}]->(i)
  ON CREATE SET link.user_id = $userId
RETURN count(link) AS added
