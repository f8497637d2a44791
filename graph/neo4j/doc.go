// Package neo4j is the groundwork of the graph driver on Neo4j (issue 12):
// connection setup with startup errors classified into one line each, and
// the runner of the Neo4j migrations (migrations/neo4j). The statements the
// driver runs live in package cypher; the model is in docs/neo4j.md.
//
// The graph.Driver implementation itself comes next, once the driver
// interface settles (bulk writes for store, a text-search capability); it
// will live here and end its test file with graphtest.Run. Until then
// selecting Neo4j in cmd/cairn fails with a clear error.
package neo4j
