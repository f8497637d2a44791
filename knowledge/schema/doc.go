// Package schema is Cairn's schema vocabulary and its rules: the contract
// of an entity type (Schema, Field, FieldType, MergePolicy,
// RelationshipType), the built-in types, the Registry that resolves a
// user's schemas (own, global, built in) over a Store of versions, and the
// rules that need no service: type-name normalisation and validation,
// inference of a first schema from a store's payload (Infer), definition
// checks and compatibility between versions, version numbering, field-value
// coercion, the scoring of raw fragments into candidate fields and
// recommendations, and the filter semantics of Epitome's tables.
//
// What needs a caller, consent or the graph stays in package knowledge:
// the Service methods that register and evolve schemas
// (RegisterSchema, UpdateSchemaIncremental), analyse raw fragments
// (AnalyzeSchemaCandidates, auto-enhancement after a store), migrate them
// (MigrateFragments) and read tables (Tables, QueryTable). They call into
// this package and report its *InvalidError as a *knowledge.ValidationError.
//
// This package imports graph only for the entity and relationship type name
// rules; it never imports knowledge.
package schema
