// Package transfer writes one user's (or every user's) data as a JSON
// Lines export, and reads such an export into a store of any backend: the
// format and its guarantees are documented in docs/export.md.
//
// An export keeps history: schema versions (the user's, and the global ones
// when every user is exported) with recommendations and settings, sources,
// every observation, entities with their merges, every period of every
// relationship (ended ones too) with their observations, timeline events,
// raw fragments, stored files with their bytes, memories (with their
// vectors on request), the profile and its changes, contradictions;
// consent (agents and rules) and the audit log on request. API keys never. Derived state (entity embeddings, search
// indexes) is not exported: an import rebuilds it.
//
// Both directions stream: Export reads the store a page at a time, Import
// reads the file a line at a time and writes in batches of bounded size.
// Import is idempotent: what the store holds already is left as it is, so
// running it twice changes nothing.
//
// Import trusts nothing in the file: an export line never changes a row
// the store holds (an entity, its observations, a relationship, a control
// row), every value passes the checks a tool call applies (ids, type
// names, the field size bound), a new entity is written only if its
// snapshot agrees with its observations, lines are read with a bounded
// buffer, and agents, consent rules and audit records are written only
// when ImportOptions asks for them. A line that fails is refused and
// counted (Stats.Skipped, Stats.Refused); the import goes on.
//
// Tombstones are the exception: a memory or graph tombstone in the file
// is an erasure made in the store the export came from, and the import
// erases what the store still holds of it (memories through the vector
// store, entities and sources through ImportOptions.Eraser, as erase
// does) and counts it (Stats.Erased). Lines of what the store has a
// tombstone of are skipped, so an export made before an erasure brings
// nothing back.
//
// Ids are kept. Entity and source ids are hashes that include the user id,
// so an export is imported under the user ids it names; a user of the
// target with the same name but another id (or the same id but another
// name) is a clash, and Import refuses it before writing anything of that
// user.
package transfer
