package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/graph"
)

// NormalizeTypeName folds an entity type name as stored: trimmed, lower
// case, and every run of spaces, hyphens and dots made one underscore
// ("Bank Account" and "bank-account" are bank_account). It does not check
// the result; ValidateTypeName does.
func NormalizeTypeName(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	var b strings.Builder
	sep := false
	for _, r := range t {
		if r == ' ' || r == '-' || r == '.' || r == '\t' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// ValidateTypeName returns an *InvalidError at path unless t (already
// normalised) can name an entity type on every backend: 1 to 63 lower-case
// letters, digits and underscores, starting with a letter, and not a name
// Cairn keeps for its own graph nodes (entity, source, observation, …).
func ValidateTypeName(path, t string) error {
	if err := graph.ValidEntityTypeName(t); err != nil {
		return invalid(path, "a type name of 1..63 lower-case letters, digits and underscores, starting with a letter", "string",
			"entity type %q cannot be used: it must be 1..63 lower-case letters, digits and underscores, start with a letter, and not be one of Cairn's own node names", truncate(t, 64))
	}
	return nil
}

// identityCandidates are the field names that give an inferred schema its
// identity, in order of preference; after them, the first field (in sorted
// order) named "…_id" does.
var identityCandidates = []string{"name", "title", "id"}

// MaxInferredFields bounds the fields a first store gives a new type: the
// identity and then the others in name order; the rest are kept as raw
// fragments, as a later store's unknown fields are.
const MaxInferredFields = 64

// Infer is the schema the first store of a type nobody registered creates
// for the user: every field the call's entities of that type give, each
// typed by its values, deterministic from the set of entities (neither
// their order nor the order of their fields matters).
//
// The identity is "name" if any entity has it, else "title", else "id",
// else the first field in sorted order whose name ends in "_id"; its type
// is number when every value given is a number, string otherwise. An
// entity without it is identified by its content; with no candidate at all
// every entity is. Every other field takes the one type all its values
// have (a date is an ISO 8601 string; an array merges by union, a date
// yields timeline events), or string when its values are strings, dates
// and numbers mixed; a field whose values share no type is left out. The
// fields Infer gives are marked Inferred: a later value that does not fit
// one is kept as a raw fragment rather than refused, since nobody declared
// the type (see knowledge's store). Fields that later stores bring are
// kept as raw fragments, from which auto-enhancement and
// update_schema_incremental promote them (see knowledge's
// Service.AnalyzeSchemaCandidates).
func Infer(entityType string, entities []map[string]any) *Schema {
	values := map[string][]any{}
	for _, e := range entities {
		for k, v := range e {
			if k != "entity_type" && v != nil && CheckFieldName("", k) == nil {
				values[k] = append(values[k], v)
			}
		}
	}
	ident := ""
	for _, c := range identityCandidates {
		if values[c] != nil {
			ident = c
			break
		}
	}
	names := slices.Sorted(maps.Keys(values))
	if ident == "" {
		for _, k := range names {
			if strings.HasSuffix(k, "_id") {
				ident = k
				break
			}
		}
	}
	s := &Schema{
		EntityType: entityType, Version: "1.0", Fields: map[string]Field{},
		Description: fmt.Sprintf("%s records (a type created by the first store of one; its fields evolve from the data).",
			strings.ReplaceAll(entityType, "_", " ")),
	}
	if ident != "" {
		typ := TypeNumber
		for _, v := range values[ident] {
			if JSONType(v) != "number" {
				typ = TypeString
			}
		}
		s.Fields[ident] = Field{Type: typ, Identifier: true, Description: "Identifies the record (inferred)."}
		s.IdentityFields, s.NameFields = []string{ident}, []string{ident}
	}
	for _, name := range names {
		if len(s.Fields) == MaxInferredFields {
			break
		}
		if name == ident {
			continue
		}
		if t, ok := commonType(values[name]); ok {
			f := NewField(entityType, name, t)
			f.Inferred, f.Description = true, "Inferred from the first store of the type."
			s.Fields[name] = f
		}
	}
	return s
}

// NewField is a field of type t added to a type's schema, with the
// defaults every way of adding one shares: an array merges by union, a
// date yields a timeline event of its own type.
func NewField(entityType, name string, t FieldType) Field {
	f := Field{Type: t}
	switch t {
	case TypeArray:
		f.Policy = MergeArray
	case TypeDate:
		f.EventType = EventTypeFor(entityType, name)
	}
	return f
}

// commonType is the field type every one of values fits (Coerce accepts
// it): the type they all suggest, or string when they are strings, dates
// and numbers mixed. ok is false when they share none.
func commonType(values []any) (t FieldType, ok bool) {
	t = ValueType(values[0])
	for _, v := range values[1:] {
		if ValueType(v) != t {
			t = TypeString
			break
		}
	}
	for _, v := range values {
		if _, err := t.Coerce("", v); err != nil {
			return "", false
		}
	}
	return t, true
}

// ValueType is the field type a raw value suggests: a string that is an
// ISO 8601 date is a date.
func ValueType(v any) FieldType {
	switch v := v.(type) {
	case string:
		if _, ok := NormalizeDate(v); ok {
			return TypeDate
		}
		return TypeString
	case json.Number, float64, float32, int, int64, int32:
		return TypeNumber
	case bool:
		return TypeBoolean
	case []any:
		return TypeArray
	case map[string]any:
		return TypeObject
	}
	return TypeString
}

// fieldTypes are every field type, in the order analysis breaks ties.
var fieldTypes = []FieldType{TypeString, TypeNumber, TypeDate, TypeBoolean, TypeArray, TypeObject}

// Valid reports whether t is a field type.
func (t FieldType) Valid() bool { return slices.Contains(fieldTypes, t) }
