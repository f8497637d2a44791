package knowledge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
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
// Corrections (source priority CorrectionPriority) win under every policy.
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
	Type        FieldType
	Required    bool
	Description string
	Policy      MergePolicy // empty means LastWrite
	// Identifier fields (names, emails, tax ids) are indexed for
	// retrieve_entity_by_identifier.
	Identifier bool
	// EventType, on a date field, names the timeline event the field yields.
	EventType string
}

// policy returns the field's merge policy, defaulting to LastWrite.
func (f Field) policy() MergePolicy { return cmp.Or(f.Policy, LastWrite) }

// Schema is the contract of an entity type: its fields, which of them give
// an entity its identity and name, and how observations merge.
type Schema struct {
	EntityType  string
	Version     string
	Description string
	Fields      map[string]Field
	// IdentityFields, normalised, determine the entity id.
	IdentityFields []string
	// NameFields are tried in order for the canonical name.
	NameFields []string
	// RelationshipTypes are relationship types this schema registers beside
	// the built-in ones.
	RelationshipTypes []string
}

// FieldNames returns the schema's field names, sorted.
func (s *Schema) FieldNames() []string { return slices.Sorted(maps.Keys(s.Fields)) }

// Registry holds the schemas the service knows. Built-in schemas are always
// present; more can be registered at run time.
type Registry struct {
	mu      sync.RWMutex
	schemas map[string]*Schema
	// gen counts changes, so that indexes derived from the schemas (the
	// type embeddings) know when to rebuild.
	gen uint64
}

// NewRegistry returns a registry holding the built-in schemas.
func NewRegistry() *Registry {
	r := &Registry{schemas: map[string]*Schema{}}
	for _, s := range builtinSchemas() {
		r.schemas[s.EntityType] = s
	}
	return r
}

// Register adds or replaces a schema after checking that it is coherent.
func (r *Registry) Register(s *Schema) error {
	if err := s.check(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.schemas[s.EntityType] = s
	r.gen++
	return nil
}

// Generation returns a number that changes whenever a schema is registered.
func (r *Registry) Generation() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gen
}

// Lookup returns the schema of an entity type.
func (r *Registry) Lookup(entityType string) (*Schema, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.schemas[entityType]
	return s, ok
}

// All returns every schema, ordered by entity type.
func (r *Registry) All() []*Schema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := slices.Collect(maps.Values(r.schemas))
	slices.SortFunc(out, func(a, b *Schema) int { return strings.Compare(a.EntityType, b.EntityType) })
	return out
}

// Types returns every entity type name, sorted.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.schemas))
}

// KnowsRelationshipType reports whether t is built in or registered by a
// schema.
func (r *Registry) KnowsRelationshipType(t string, builtin func(string) bool) bool {
	if builtin(t) {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range r.schemas {
		if slices.Contains(s.RelationshipTypes, t) {
			return true
		}
	}
	return false
}

// check verifies that a schema's parts refer to each other correctly.
func (s *Schema) check() error {
	if s.EntityType == "" || len(s.Fields) == 0 {
		return fmt.Errorf("knowledge: schema %q needs a type and fields", s.EntityType)
	}
	for _, name := range append(slices.Clone(s.IdentityFields), s.NameFields...) {
		if _, ok := s.Fields[name]; !ok {
			return fmt.Errorf("knowledge: schema %s: %q is not a field", s.EntityType, name)
		}
	}
	for name, f := range s.Fields {
		switch f.Type {
		case TypeString, TypeNumber, TypeDate, TypeBoolean, TypeArray, TypeObject:
		default:
			return fmt.Errorf("knowledge: schema %s: field %s has unknown type %q", s.EntityType, name, f.Type)
		}
		switch f.policy() {
		case LastWrite, HighestPriority, MostSpecific:
		case MergeArray:
			if f.Type != TypeArray {
				return fmt.Errorf("knowledge: schema %s: merge_array needs an array field, %s is %s", s.EntityType, name, f.Type)
			}
		default:
			return fmt.Errorf("knowledge: schema %s: field %s has unknown merge policy %q", s.EntityType, name, f.Policy)
		}
		if f.EventType != "" && f.Type != TypeDate {
			return fmt.Errorf("knowledge: schema %s: only date fields yield events, %s is %s", s.EntityType, name, f.Type)
		}
	}
	return nil
}
