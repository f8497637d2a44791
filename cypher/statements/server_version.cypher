// The version and edition of the Neo4j server, checked at start: Cairn needs
// Neo4j 5 or newer.
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition
