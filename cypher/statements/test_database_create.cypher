// The Neo4j conformance harness (graph/neo4j) on Enterprise Edition: a
// database of its own for each store a test asks for, so that tests that
// reuse the suite's ids and users run side by side. Run in the system
// database.
CREATE DATABASE $name IF NOT EXISTS WAIT
