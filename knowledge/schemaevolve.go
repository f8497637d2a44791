package knowledge

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// RegisterSchemaRequest registers a schema version (register_schema).
type RegisterSchemaRequest struct {
	// Schema is the definition; its EntityType is normalised, an empty
	// Version means "1.0".
	Schema *Schema
	// Global registers it for every user (the MCP layer lets only the
	// owner agent of an operator-enabled deployment do so); otherwise it
	// is the caller's own.
	Global bool
	// Activate makes it the active version at once.
	Activate bool
	// By names who registers it (the agent, or "operator").
	By string
}

// SchemaChange is what a schema operation did.
type SchemaChange struct {
	Schema      *Schema
	ID          string
	Activated   bool
	FieldsAdded []string
	// Migrated counts the raw fragments turned into observations.
	Migrated int
}

// RegisterSchema stores a new schema version, global or the caller's own,
// after checking it and, when the scope already has data of the type under
// another version, that it stays compatible with it (see compatible).
func (s *Service) RegisterSchema(ctx context.Context, c Caller, req RegisterSchemaRequest) (SchemaChange, error) {
	if c.UserID == "" && !req.Global {
		return SchemaChange{}, ErrUserIDRequired
	}
	owner := c.UserID
	if req.Global {
		owner = ""
	}
	v, err := s.schemas.RegisterVersion(ctx, owner, req.Schema, req.Activate, req.By, s.clock())
	if err != nil {
		return SchemaChange{}, err
	}
	return SchemaChange{Schema: v.Schema, ID: v.ID, Activated: v.Active}, nil
}

// RegisterVersion stores a schema version for an owner ("" for global):
// the type name normalised and checked, the definition checked (a
// *ValidationError names the bad part), an empty version made "1.0", and,
// when the owner's data of the type already follows a schema, the new one
// checked compatible with it (see compatible). A version the owner has is
// an ErrSchemaExists.
func (r *Registry) RegisterVersion(ctx context.Context, owner string, def *Schema, activate bool, by string, at time.Time) (SchemaVersion, error) {
	sc := def.clone()
	sc.EntityType = NormalizeTypeName(sc.EntityType)
	if err := ValidateTypeName("entity_type", sc.EntityType); err != nil {
		return SchemaVersion{}, err
	}
	if sc.Version == "" {
		sc.Version = "1.0"
	}
	if err := checkDefinition(sc); err != nil {
		return SchemaVersion{}, err
	}
	sc.Owner = owner
	base, err := r.scopeBase(ctx, owner, sc.EntityType)
	if err != nil {
		return SchemaVersion{}, err
	}
	if base != nil {
		if err := compatible(base, sc); err != nil {
			return SchemaVersion{}, err
		}
	}
	return r.store.AddSchemaVersion(ctx, SchemaVersion{
		ID: SchemaVersionID(owner, sc.EntityType, sc.Version), Owner: owner, EntityType: sc.EntityType, Version: sc.Version,
		Schema: sc, Active: activate, CreatedAt: at, CreatedBy: by,
	})
}

// scopeBase returns the schema that data of a type follows in a scope
// before a change: for a user's scope the one the user resolves (own,
// global or built in), for the global scope the global or built-in one;
// nil when there is none.
func (r *Registry) scopeBase(ctx context.Context, owner, entityType string) (*Schema, error) {
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

// checkDefinition checks a schema's parts and returns a *ValidationError
// naming the bad field definition.
func checkDefinition(sc *Schema) error {
	for _, name := range sc.FieldNames() {
		f := sc.Fields[name]
		path := "schema_definition.fields." + name
		if err := checkFieldName(path, name); err != nil {
			return err
		}
		if !validFieldType(f.Type) {
			return invalid(path+".type", "one of: string, number, date, boolean, array, object", string(f.Type), "unknown field type %q", truncate(string(f.Type), 32))
		}
		switch f.policy() {
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

// checkFieldName checks a field's name as store checks the names it keeps.
func checkFieldName(path, name string) error {
	if name == "" || len(name) > maxFieldNameLen || name == "entity_type" {
		return invalid(path, fmt.Sprintf("a field name of 1..%d bytes other than entity_type", maxFieldNameLen), "string", "field name %q is empty, too long or reserved", truncate(name, 32))
	}
	return nil
}

// compatible reports why next cannot follow prev for data already stored:
// the identity fields determine entity ids, so they may not change; a
// field may not change type unless every value of the old type is one of
// the new (number or date to string).
func compatible(prev, next *Schema) error {
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

// NewField is a field update_schema_incremental adds.
type NewField struct {
	Name     string
	Type     FieldType
	Required bool
	Policy   MergePolicy
}

// SchemaUpdateRequest adds fields to a schema as a new version
// (update_schema_incremental).
type SchemaUpdateRequest struct {
	EntityType string
	Fields     []NewField
	// Version is the new version; empty means the next minor version of
	// the one it derives from (1.0 → 1.1), or the next free one.
	Version string
	// Global updates the global schema; otherwise the caller's own (made
	// from the global or built-in one when the caller has none).
	Global bool
	// Activate makes the new version active at once.
	Activate bool
	// MigrateExisting turns the caller's raw fragments of the added fields
	// into observations (see MigrateFragments).
	MigrateExisting bool
	// RecommendationID, when set, applies a stored recommendation: its
	// fields are added (with Fields, if any) and it is marked applied.
	RecommendationID string
	By               string
}

// UpdateSchemaIncremental derives a new version from the scope's current
// schema of the type with fields added, stores it (active unless told
// otherwise), and optionally backfills the caller's raw fragments of the
// new fields. A field the schema has with the same type is not added again;
// one with another type is refused. The same request on the same schema
// gives the same version.
func (s *Service) UpdateSchemaIncremental(ctx context.Context, c Caller, req SchemaUpdateRequest) (SchemaChange, error) {
	if c.UserID == "" && !req.Global {
		return SchemaChange{}, ErrUserIDRequired
	}
	typ := NormalizeTypeName(req.EntityType)
	owner := c.UserID
	if req.Global {
		owner = ""
	}
	base, err := s.schemas.scopeBase(ctx, owner, typ)
	if err != nil {
		return SchemaChange{}, err
	}
	if base == nil {
		return SchemaChange{}, &SchemaError{Kind: ErrSchemaNotFound, EntityType: typ, Scope: scopeOf(owner)}
	}
	fields := slices.Clone(req.Fields)
	var rec *Recommendation
	if req.RecommendationID != "" {
		recs, err := s.schemas.store.Recommendations(ctx, c.UserID, typ)
		if err != nil {
			return SchemaChange{}, err
		}
		i := slices.IndexFunc(recs, func(r Recommendation) bool { return r.ID == req.RecommendationID })
		if i < 0 {
			return SchemaChange{}, invalid("recommendation_id", "the id of a recommendation for "+typ, "string", "no recommendation %q for %s", truncate(req.RecommendationID, 64), typ)
		}
		rec = &recs[i]
		for _, f := range rec.Fields {
			fields = append(fields, NewField{Name: f.Name, Type: f.Type, Required: f.Required})
		}
	}
	if len(fields) == 0 {
		return SchemaChange{}, invalid("fields_to_add", "at least one field", "empty array", "name the fields to add")
	}
	next := base.clone()
	next.Owner = owner
	var added []string
	for i, f := range fields {
		path := fmt.Sprintf("fields_to_add[%d]", i)
		if err := checkFieldName(path+".field_name", f.Name); err != nil {
			return SchemaChange{}, err
		}
		if !validFieldType(f.Type) {
			return SchemaChange{}, invalid(path+".field_type", "one of: string, number, date, boolean, array, object", string(f.Type), "unknown field type %q", truncate(string(f.Type), 32))
		}
		nf := Field{Type: f.Type, Required: f.Required, Policy: f.Policy}
		if f.Policy == "" && f.Type == TypeArray {
			nf.Policy = MergeArray
		}
		if f.Type == TypeDate {
			nf.EventType = eventTypeFor(typ, f.Name)
		}
		switch nf.policy() {
		case LastWrite, HighestPriority, MostSpecific:
		case MergeArray:
			if f.Type != TypeArray {
				return SchemaChange{}, invalid(path+".reducer_strategy", "a strategy for a "+string(f.Type)+" field", string(f.Policy), "merge_array needs an array field; %s is %s", f.Name, f.Type)
			}
		default:
			return SchemaChange{}, invalid(path+".reducer_strategy", "last_write, highest_priority, most_specific or merge_array", string(f.Policy), "unknown reducer strategy %q", truncate(string(f.Policy), 32))
		}
		if old, ok := next.Fields[f.Name]; ok {
			if old.Type != f.Type {
				return SchemaChange{}, invalid(path+".field_type", string(old.Type), string(f.Type),
					"%s is already a %s field of %s %s; a field's type cannot change this way", f.Name, old.Type, typ, base.Version)
			}
			continue
		}
		next.Fields[f.Name] = nf
		added = append(added, f.Name)
	}
	slices.Sort(added)
	if len(added) == 0 {
		return SchemaChange{Schema: base, ID: SchemaVersionID(base.Owner, typ, base.Version)}, nil
	}
	versions, err := s.schemas.store.SchemaVersions(ctx, owner, typ)
	if err != nil {
		return SchemaChange{}, err
	}
	next.Version = req.Version
	if next.Version == "" {
		next.Version = nextVersion(base.Version, versions)
	}
	v, err := s.schemas.store.AddSchemaVersion(ctx, SchemaVersion{
		ID: SchemaVersionID(owner, typ, next.Version), Owner: owner, EntityType: typ, Version: next.Version,
		Schema: next, Active: req.Activate, CreatedAt: s.clock(), CreatedBy: req.By,
	})
	if err != nil {
		return SchemaChange{}, err
	}
	out := SchemaChange{Schema: next, ID: v.ID, Activated: req.Activate, FieldsAdded: added}
	status := RecommendationApplied
	if req.By == byAutoEnhancement {
		status = RecommendationAutoApplied
	}
	if err := s.markApplied(ctx, c.UserID, typ, added, rec, status); err != nil {
		return out, err
	}
	if req.MigrateExisting && req.Activate {
		n, err := s.MigrateFragments(ctx, c, typ, added)
		if err != nil {
			return out, err
		}
		out.Migrated = n
	}
	return out, nil
}

// byAutoEnhancement is who auto-enhancement's versions are by.
const byAutoEnhancement = "auto_enhancement"

// markApplied sets the status of the user's pending recommendations for
// the type that the added fields fulfil, and of rec.
func (s *Service) markApplied(ctx context.Context, userID, typ string, added []string, rec *Recommendation, status RecommendationStatus) error {
	recs, err := s.schemas.store.Recommendations(ctx, userID, typ)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Status != RecommendationPending && r.Status != RecommendationApproved {
			continue
		}
		all := len(r.Fields) > 0
		for _, f := range r.Fields {
			all = all && slices.Contains(added, f.Name)
		}
		if all || (rec != nil && r.ID == rec.ID) {
			if err := s.schemas.store.SetRecommendationStatus(ctx, userID, r.ID, status); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextVersion is the next minor version after v (1.0 → 1.1, 2 → 2.1)
// that none of versions has.
func nextVersion(v string, versions []SchemaVersion) string {
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if !ok || err != nil {
		major, n = v, 0
	}
	for {
		n++
		cand := major + "." + strconv.Itoa(n)
		if !slices.ContainsFunc(versions, func(sv SchemaVersion) bool { return sv.Version == cand }) {
			return cand
		}
	}
}

// createInferred registers the schemas a store inferred as the user's
// own, each as version 1.0, active.
func (s *Service) createInferred(ctx context.Context, c Caller, inferred []*Schema) ([]*Schema, error) {
	for _, sc := range inferred {
		if _, err := s.schemas.store.AddSchemaVersion(ctx, SchemaVersion{
			ID: SchemaVersionID(c.UserID, sc.EntityType, sc.Version), Owner: c.UserID, EntityType: sc.EntityType,
			Version: sc.Version, Schema: sc, Active: true, CreatedAt: s.clock(), CreatedBy: "store",
		}); err != nil {
			return nil, err
		}
	}
	return inferred, nil
}

// eventTypeFor names the timeline event a date field added to a type
// yields: the type and the field in UpperCamelCase (meal, eaten_at →
// MealEatenAt).
func eventTypeFor(entityType, field string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(entityType+"_"+field, func(r rune) bool { return r == '_' || r == ' ' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
