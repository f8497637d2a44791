// The Neo4j conformance harness (graph/neo4j) on Enterprise Edition: drops
// a test's database when the test ends. Run in the system database.
DROP DATABASE $name IF EXISTS WAIT
