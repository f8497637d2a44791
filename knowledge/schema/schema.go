package schema

import (
	"cmp"
	"maps"
	"slices"
)

// FieldType is the JSON shape a schema field accepts.
type FieldType string

// Field types.
const (
	TypeString  FieldType = "string"
	TypeNumber  FieldType = "number"
	TypeDate    FieldType = "date"
	TypeBoolean FieldType = "boolean"
	TypeArray   FieldType = "array"
	TypeObject  FieldType = "object"
)

// MergePolicy says how the reducer picks a field's value among observations.
// Corrections (source priority knowledge.CorrectionPriority) win under
// every policy.
type MergePolicy string

// Merge policies.
const (
	// LastWrite takes the most recently observed value.
	LastWrite MergePolicy = "last_write"
	// HighestPriority takes the value from the highest-priority source.
	HighestPriority MergePolicy = "highest_priority"
	// MostSpecific takes the value from the observation that filled the
	// largest share of the schema (its specificity score).
	MostSpecific MergePolicy = "most_specific"
	// MergeArray unions the arrays of every observation.
	MergeArray MergePolicy = "merge_array"
)

// Field describes one schema field.
type Field struct {
	Type        FieldType   `json:"type"`
	Required    bool        `json:"required,omitempty"`
	Description string      `json:"description,omitempty"`
	Policy      MergePolicy `json:"merge_policy,omitempty"` // empty means LastWrite
	// Identifier fields (names, emails, tax ids) are indexed for
	// retrieve_entity_by_identifier.
	Identifier bool `json:"identifier,omitempty"`
	// EventType, on a date field, names the timeline event the field yields.
	EventType string `json:"event_type,omitempty"`
	// Inferred fields were typed by Cairn from the values stored (a type's
	// first store, auto-enhancement), not declared: a value that does not
	// fit one is kept as a raw fragment rather than refused.
	Inferred bool `json:"inferred,omitempty"`
}

// EffectivePolicy returns the field's merge policy, defaulting to LastWrite.
func (f Field) EffectivePolicy() MergePolicy { return cmp.Or(f.Policy, LastWrite) }

// Schema is the contract of an entity type: its fields, which of them give
// an entity its identity and name, and how observations merge. A schema is
// immutable once registered: a change is a new version (see Registry).
type Schema struct {
	EntityType  string           `json:"entity_type"`
	Version     string           `json:"version"`
	Description string           `json:"description,omitempty"`
	Fields      map[string]Field `json:"fields"`
	// IdentityFields, normalised, determine the entity id.
	IdentityFields []string `json:"identity_fields,omitempty"`
	// NameFields are tried in order for the canonical name.
	NameFields []string `json:"name_fields,omitempty"`
	// RelationshipTypes are relationship types this schema registers beside
	// the built-in ones.
	RelationshipTypes []RelationshipType `json:"relationship_types,omitempty"`
	// Owner is the user whose schema this is; empty for a global schema
	// (built in or registered by the operator). Set by the registry.
	Owner string `json:"-"`
}

// RelationshipType is a relationship type a schema registers.
type RelationshipType struct {
	Name string `json:"name"`
	// Acyclic edges of the type may never form a cycle (CYCLE_DETECTED).
	Acyclic bool `json:"acyclic,omitempty"`
}

// Scope is "user" for a user's own schema and "global" otherwise.
func (s *Schema) Scope() string { return ScopeOf(s.Owner) }

// ScopeOf is the scope of a schema owned by owner: ScopeGlobal for the
// empty owner, ScopeUser otherwise.
func ScopeOf(owner string) string {
	if owner == "" {
		return ScopeGlobal
	}
	return ScopeUser
}

// Schema scopes.
const (
	ScopeGlobal = "global"
	ScopeUser   = "user"
)

// FieldNames returns the schema's field names, sorted.
func (s *Schema) FieldNames() []string { return slices.Sorted(maps.Keys(s.Fields)) }

// Clone returns a deep copy of s, so that a new version never shares maps
// with the one it derives from.
func (s *Schema) Clone() *Schema {
	c := *s
	c.Fields = maps.Clone(s.Fields)
	c.IdentityFields = slices.Clone(s.IdentityFields)
	c.NameFields = slices.Clone(s.NameFields)
	c.RelationshipTypes = slices.Clone(s.RelationshipTypes)
	return &c
}
