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

// Infer is the schema the first store of a type nobody registered creates
// for the user: deterministic from the entities of that type in the call,
// and independent of their other fields, so that the same stores in any
// order give the same schema.
//
// It holds one field, the identity: "name" if any entity has it, else
// "title", else "id", else the first field in sorted order whose name ends
// in "_id"; its type is number when every value given is a number, string
// otherwise. An entity without it is identified by its content. With no
// candidate at all the schema has no fields, and every entity is
// identified by its content. Every other field is kept as a raw fragment,
// from which auto-enhancement and update_schema_incremental promote fields
// (see knowledge's Service.AnalyzeSchemaCandidates).
func Infer(entityType string, entities []map[string]any) *Schema {
	names := map[string]bool{}
	for _, e := range entities {
		for k, v := range e {
			if k != "entity_type" && v != nil {
				names[k] = true
			}
		}
	}
	ident := ""
	for _, c := range identityCandidates {
		if names[c] {
			ident = c
			break
		}
	}
	if ident == "" {
		for _, k := range slices.Sorted(maps.Keys(names)) {
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
	if ident == "" {
		return s
	}
	typ := TypeNumber
	for _, e := range entities {
		if v, ok := e[ident]; ok && v != nil && JSONType(v) != "number" {
			typ = TypeString
		}
	}
	s.Fields[ident] = Field{Type: typ, Identifier: true, Description: "Identifies the record (inferred)."}
	s.IdentityFields, s.NameFields = []string{ident}, []string{ident}
	return s
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
