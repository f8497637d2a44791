// Package graph is Cairn's portable graph API: sources, observations,
// entities with their reduced snapshots, raw fragments, identifiers, timeline
// events and typed relationships, all scoped to one user.
//
// It follows the portable-type/driver pattern: callers use *Store and *Tx;
// a backend implements the small Driver and DriverTx interfaces; and one
// conformance suite, graph/graphtest, runs against every driver. The embedded
// SQLite driver lives in graph/embedded.
//
// Rules that must hold on every backend live here, once: relationship type
// validation, deterministic relationship ids, the acyclicity rule for
// PART_OF, DEPENDS_ON, SUPERSEDES and CORRECTS (also under concurrent
// writers), and the caps and determinism of traversals.
//
// The graph also keeps an outbox of changed entities (outbox.go): a write
// transaction enqueues what it changed, and consumers of derived data (the
// entity embeddings) claim, process and acknowledge entries after the
// commit, so that a crash between the two is repaired at the next start.
//
// Every method takes the user id and touches only that user's rows; a row of
// another user is reported exactly as a missing one (ErrNotFound).
package graph
