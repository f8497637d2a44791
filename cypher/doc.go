// Package cypher holds every Cypher statement Cairn runs against Neo4j, one
// named .cypher file each under statements/, embedded in the binary and
// loaded by name.
//
// Statements live in files rather than in Go strings so that Neo4j's own
// Cypher front end can check every one of them in the test suite (see
// TestLint: syntax, semantics, and every label, relationship type, property
// key and parameter against the schema in testdata/schema.json), and so that
// a reader can paste one into Neo4j Browser as it is.
//
// Values are always parameters ($userId, $id, …), never spliced into the
// text. Names that Cypher cannot take as parameters in every Neo4j 5 (the
// type label of an entity, the type of a relationship, the upper bound of a
// variable-length pattern) are written as placeholders (__LABEL__,
// __REL_TYPE__, __MAX_HOPS__) that only Render fills, and only from values
// that Label, RelType and the hop bound check accept. Every statement is
// scoped to one user by user_id, except the few listed in CrossUser (the
// outbox claim that workers run for every user, and the migration runner's
// bookkeeping).
package cypher
