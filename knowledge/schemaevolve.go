package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// ErrUserIDRequired means a user-scoped schema operation has no user.
var ErrUserIDRequired = errors.New("user_id required for a user-specific schema")

// RegisterSchemaRequest registers a schema version (register_schema).
type RegisterSchemaRequest struct {
	// Schema is the definition; its EntityType is normalised, an empty
	// Version means "1.0".
	Schema *schema.Schema
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
	Schema      *schema.Schema
	ID          string
	Activated   bool
	FieldsAdded []string
	// Migrated counts the raw fragments turned into observations.
	Migrated int
}

// RegisterSchema stores a new schema version, global or the caller's own,
// after checking it and, when the scope already has data of the type under
// another version, that it stays compatible with it (see
// schema.Registry.RegisterVersion).
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
		return SchemaChange{}, validationError(err)
	}
	return SchemaChange{Schema: v.Schema, ID: v.ID, Activated: v.Active}, nil
}

// NewField is a field update_schema_incremental adds.
type NewField struct {
	Name     string
	Type     schema.FieldType
	Required bool
	Policy   schema.MergePolicy
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
	typ := schema.NormalizeTypeName(req.EntityType)
	owner := c.UserID
	if req.Global {
		owner = ""
	}
	base, err := s.schemas.Base(ctx, owner, typ)
	if err != nil {
		return SchemaChange{}, err
	}
	if base == nil {
		return SchemaChange{}, &schema.Error{Kind: schema.ErrNotFound, EntityType: typ, Scope: schema.ScopeOf(owner)}
	}
	fields := slices.Clone(req.Fields)
	var rec *schema.Recommendation
	if req.RecommendationID != "" {
		recs, err := s.schemas.Store().Recommendations(ctx, c.UserID, typ)
		if err != nil {
			return SchemaChange{}, err
		}
		i := slices.IndexFunc(recs, func(r schema.Recommendation) bool { return r.ID == req.RecommendationID })
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
	next := base.Clone()
	next.Owner = owner
	var added []string
	for i, f := range fields {
		path := fmt.Sprintf("fields_to_add[%d]", i)
		if err := schema.CheckFieldName(path+".field_name", f.Name); err != nil {
			return SchemaChange{}, validationError(err)
		}
		if !f.Type.Valid() {
			return SchemaChange{}, invalid(path+".field_type", "one of: string, number, date, boolean, array, object", string(f.Type), "unknown field type %q", truncate(string(f.Type), 32))
		}
		nf := schema.NewField(typ, f.Name, f.Type)
		nf.Required, nf.Policy = f.Required, cmp.Or(f.Policy, nf.Policy)
		nf.Inferred = req.By == byAutoEnhancement
		switch nf.EffectivePolicy() {
		case schema.LastWrite, schema.HighestPriority, schema.MostSpecific:
		case schema.MergeArray:
			if f.Type != schema.TypeArray {
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
		return SchemaChange{Schema: base, ID: schema.VersionID(base.Owner, typ, base.Version)}, nil
	}
	versions, err := s.schemas.Store().SchemaVersions(ctx, owner, typ)
	if err != nil {
		return SchemaChange{}, err
	}
	next.Version = req.Version
	if next.Version == "" {
		next.Version = schema.NextVersion(base.Version, versions)
	}
	v, err := s.schemas.Store().AddSchemaVersion(ctx, schema.Version{
		ID: schema.VersionID(owner, typ, next.Version), Owner: owner, EntityType: typ, Version: next.Version,
		Schema: next, Active: req.Activate, CreatedAt: s.clock(), CreatedBy: req.By,
	})
	if err != nil {
		return SchemaChange{}, err
	}
	out := SchemaChange{Schema: next, ID: v.ID, Activated: req.Activate, FieldsAdded: added}
	status := schema.RecommendationApplied
	if req.By == byAutoEnhancement {
		status = schema.RecommendationAutoApplied
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
func (s *Service) markApplied(ctx context.Context, userID, typ string, added []string, rec *schema.Recommendation, status schema.RecommendationStatus) error {
	recs, err := s.schemas.Store().Recommendations(ctx, userID, typ)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Status != schema.RecommendationPending && r.Status != schema.RecommendationApproved {
			continue
		}
		all := len(r.Fields) > 0
		for _, f := range r.Fields {
			all = all && slices.Contains(added, f.Name)
		}
		if all || (rec != nil && r.ID == rec.ID) {
			if err := s.schemas.Store().SetRecommendationStatus(ctx, userID, r.ID, status); err != nil {
				return err
			}
		}
	}
	return nil
}

// createInferred registers the schemas a store inferred as the user's
// own, each as version 1.0, active.
func (s *Service) createInferred(ctx context.Context, c Caller, inferred []*schema.Schema) ([]*schema.Schema, error) {
	for _, sc := range inferred {
		if _, err := s.schemas.Store().AddSchemaVersion(ctx, schema.Version{
			ID: schema.VersionID(c.UserID, sc.EntityType, sc.Version), Owner: c.UserID, EntityType: sc.EntityType,
			Version: sc.Version, Schema: sc, Active: true, CreatedAt: s.clock(), CreatedBy: "store",
		}); err != nil {
			return nil, err
		}
	}
	return inferred, nil
}
