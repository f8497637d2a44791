package schema

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairnkg/cairn/graph"
)

// RegisterVersion stores a schema version for an owner ("" for global):
// the type name normalised and checked, the definition checked (an
// *InvalidError names the bad part), an empty version made "1.0", and,
// when the owner's data of the type already follows a schema, the new one
// checked compatible with it (see Compatible). A version the owner has is
// an ErrExists.
func (r *Registry) RegisterVersion(ctx context.Context, owner string, def *Schema, activate bool, by string, at time.Time) (Version, error) {
	sc := def.Clone()
	sc.EntityType = NormalizeTypeName(sc.EntityType)
	if err := ValidateTypeName("entity_type", sc.EntityType); err != nil {
		return Version{}, err
	}
	if sc.Version == "" {
		sc.Version = "1.0"
	}
	if err := CheckDefinition(sc); err != nil {
		return Version{}, err
	}
	sc.Owner = owner
	base, err := r.Base(ctx, owner, sc.EntityType)
	if err != nil {
		return Version{}, err
	}
	if base != nil {
		if err := Compatible(base, sc); err != nil {
			return Version{}, err
		}
	}
	return r.store.AddSchemaVersion(ctx, Version{
		ID: VersionID(owner, sc.EntityType, sc.Version), Owner: owner, EntityType: sc.EntityType, Version: sc.Version,
		Schema: sc, Active: activate, CreatedAt: at, CreatedBy: by,
	})
}

// Base returns the schema that data of a type follows in a scope before a
// change: for a user's scope (owner a user id) the one the user resolves
// (own, global or built in), for the global scope (owner "") the global or
// built-in one; nil when there is none.
func (r *Registry) Base(ctx context.Context, owner, entityType string) (*Schema, error) {
	// For "" resolves the global and built-in schemas only: no user has
	// the empty id.
	set, err := r.For(ctx, owner)
	if err != nil {
		return nil, err
	}
	sc, ok := set.Lookup(entityType)
	if !ok {
		return nil, nil
	}
	return sc, nil
}

// CheckDefinition checks a schema's parts and returns an *InvalidError
// naming the bad field definition.
func CheckDefinition(sc *Schema) error {
	for _, name := range sc.FieldNames() {
		f := sc.Fields[name]
		path := "schema_definition.fields." + name
		if err := CheckFieldName(path, name); err != nil {
			return err
		}
		if !f.Type.Valid() {
			return invalid(path+".type", "one of: string, number, date, boolean, array, object", string(f.Type), "unknown field type %q", truncate(string(f.Type), 32))
		}
		switch f.EffectivePolicy() {
		case LastWrite, HighestPriority, MostSpecific:
		case MergeArray:
			if f.Type != TypeArray {
				return invalid("reducer_config.merge_policies."+name, "a policy that fits a "+string(f.Type)+" field", string(f.Policy),
					"merge_array needs an array field; %s is %s", name, f.Type)
			}
		default:
			return invalid("reducer_config.merge_policies."+name, "last_write, highest_priority, most_specific or merge_array", string(f.Policy),
				"unknown merge policy %q", truncate(string(f.Policy), 32))
		}
		if f.EventType != "" && f.Type != TypeDate {
			return invalid(path+".event_type", "a date field", string(f.Type), "only date fields yield timeline events; %s is %s", name, f.Type)
		}
	}
	for _, list := range []struct {
		path  string
		names []string
	}{{"schema_definition.identity_fields", sc.IdentityFields}, {"schema_definition.name_fields", sc.NameFields}} {
		for i, name := range list.names {
			if _, ok := sc.Fields[name]; !ok {
				return invalid(fmt.Sprintf("%s[%d]", list.path, i), "one of the schema's fields", "string", "%q is not a field of the schema", truncate(name, 64))
			}
		}
	}
	for i, rt := range sc.RelationshipTypes {
		if !graph.ValidRelationshipTypeName(rt.Name) {
			return invalid(fmt.Sprintf("schema_definition.relationship_types[%d].name", i), "upper-case letters, digits and underscores, starting with a letter, at most 64",
				"string", "relationship type %q is not a valid name", truncate(rt.Name, 64))
		}
	}
	return nil
}

// CheckFieldName checks a field's name as store checks the names it keeps;
// a bad one is an *InvalidError at path.
func CheckFieldName(path, name string) error {
	if name == "" || len(name) > MaxFieldNameLen || name == "entity_type" {
		return invalid(path, fmt.Sprintf("a field name of 1..%d bytes other than entity_type", MaxFieldNameLen), "string", "field name %q is empty, too long or reserved", truncate(name, 32))
	}
	return nil
}

// Compatible reports why next cannot follow prev for data already stored:
// the identity fields determine entity ids, so they may not change; a
// field may not change type unless every value of the old type is one of
// the new (number or date to string).
func Compatible(prev, next *Schema) error {
	if !slices.Equal(prev.IdentityFields, next.IdentityFields) {
		for _, f := range prev.IdentityFields {
			if !slices.Contains(next.IdentityFields, f) {
				return invalid("schema_definition.identity_fields", strings.Join(prev.IdentityFields, ", "), strings.Join(next.IdentityFields, ", "),
					"identity field %s of %s %s may not be dropped: the ids of the entities already stored derive from it", f, prev.EntityType, prev.Version)
			}
		}
		return invalid("schema_definition.identity_fields", strings.Join(prev.IdentityFields, ", "), strings.Join(next.IdentityFields, ", "),
			"the identity fields of %s may not change (they are %s in version %s): entity ids derive from them", prev.EntityType, strings.Join(prev.IdentityFields, ", "), prev.Version)
	}
	for _, name := range next.FieldNames() {
		old, ok := prev.Fields[name]
		nf := next.Fields[name]
		if !ok || old.Type == nf.Type {
			continue
		}
		if nf.Type == TypeString && (old.Type == TypeNumber || old.Type == TypeDate) {
			continue
		}
		return invalid("schema_definition.fields."+name+".type", string(old.Type), string(nf.Type),
			"field %s of %s is %s in version %s; changing it to %s would not accept the values already stored", name, prev.EntityType, old.Type, prev.Version, nf.Type)
	}
	return nil
}

// NextVersion is the next minor version after v (1.0 → 1.1, 2 → 2.1)
// that none of versions has.
func NextVersion(v string, versions []Version) string {
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if !ok || err != nil {
		major, n = v, 0
	}
	for {
		n++
		cand := major + "." + strconv.Itoa(n)
		if !slices.ContainsFunc(versions, func(sv Version) bool { return sv.Version == cand }) {
			return cand
		}
	}
}

// EventTypeFor names the timeline event a date field added to a type
// yields: the type and the field in UpperCamelCase (meal, eaten_at →
// MealEatenAt).
func EventTypeFor(entityType, field string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(entityType+"_"+field, func(r rune) bool { return r == '_' || r == ' ' || r == '-' }) {
		// The first letter, not the first byte: a field named émis or
		// 日付 keeps valid UTF-8.
		r, n := utf8.DecodeRuneInString(part)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(part[n:])
	}
	return b.String()
}
