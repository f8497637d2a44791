// Package neo4j is the graph driver on Neo4j 5 (graph.Driver,
// graph.Reacher for cycle checks in the database, and
// graph.EntityCompleter over :EntityKey nodes): connection setup with
// startup errors classified into one line each (Connect), the runner of the
// Neo4j migrations (Migrate), and the driver (New). The statements it runs
// live in package cypher, one named file each; the model is in
// docs/neo4j.md.
//
// Transactions. Update and View are the Neo4j driver's managed
// transactions (ExecuteWrite, ExecuteRead) in sessions that always name the
// database and share the Driver's bookmark manager, so that a View that
// starts after an Update committed sees it even on a cluster. Neo4j may run
// the function of a managed transaction again after a transient error (a
// deadlock, a leader switch), as graph.Driver allows. A write transaction,
// at its first call for a user, writes that user's lock node (user_lock):
// Neo4j keeps the node's exclusive lock until the transaction ends, so a
// user's writers run one at a time and each reads what the previous ones
// committed. That makes the cycle check of CreateRelationship and the edge
// it guards atomic under concurrent writers, in every process.
//
// Errors. A statement that must not end the transaction reports a
// duplicate by returning no row, which the driver turns into
// graph.ErrConflict; a uniqueness constraint that catches a concurrent
// insert (Neo.ClientError.Schema.ConstraintValidationFailed) maps to
// graph.ErrConflict too, with the Neo4j error kept for errors.As.
//
// Every method runs one named statement where it can (two where the
// contract needs a clear-then-add or a count and a page), through the
// txRunner seam that the unit tests replace with a fake.
package neo4j
