// The first half of graph.DriverTx.SetIdentifiers: drop the entity's
// identifiers, and the identifier nodes no entity is found under any more.
MATCH (e:Entity {user_id: $userId, id: $entityId})-[link:IDENTIFIED_BY]->(i:Identifier {user_id: $userId})
DELETE link
WITH DISTINCT i
WHERE NOT EXISTS { (i)<-[:IDENTIFIED_BY]-(:Entity) }
DELETE i
