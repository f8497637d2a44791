package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// The Store keeps the schema registry for the knowledge service.
var _ schema.Store = (*Store)(nil)

// schemaLock serialises the writers of the schema registry on PostgreSQL
// (a version's seq is the owner's last plus one); SQLite's write lock does
// it there.
const schemaLock int64 = 0x736368656d61

const schemaVersionColumns = `id, owner_id, entity_type, version, seq, definition, active, created_at, created_by`

func scanSchemaVersion(row interface{ Scan(...any) error }) (schema.Version, error) {
	var v schema.Version
	var def string
	var active int
	var created int64
	if err := row.Scan(&v.ID, &v.Owner, &v.EntityType, &v.Version, &v.Seq, &def, &active, &created, &v.CreatedBy); err != nil {
		return v, err
	}
	v.Active, v.CreatedAt = active == 1, fromMicros(sql.NullInt64{Int64: created, Valid: true})
	v.Schema = &schema.Schema{}
	if err := json.Unmarshal([]byte(def), v.Schema); err != nil {
		return v, fmt.Errorf("schema %s: %w", v.ID, err)
	}
	v.Schema.Owner, v.Schema.EntityType, v.Schema.Version = v.Owner, v.EntityType, v.Version
	return v, nil
}

func (s *Store) schemaVersions(ctx context.Context, q string, args ...any) ([]schema.Version, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("list schemas", err)
	}
	defer rows.Close()
	var out []schema.Version
	for rows.Next() {
		v, err := scanSchemaVersion(rows)
		if err != nil {
			return nil, wrap("read schema", err)
		}
		out = append(out, v)
	}
	return out, wrap("list schemas", rows.Err())
}

// ActiveSchemas implements schema.Store.
func (s *Store) ActiveSchemas(ctx context.Context, userID string) ([]schema.Version, error) {
	return s.schemaVersions(ctx, `SELECT `+schemaVersionColumns+` FROM schema_versions
		WHERE active = 1 AND owner_id IN ('', $1) ORDER BY owner_id, entity_type`, userID)
}

// SchemaVersions implements schema.Store.
func (s *Store) SchemaVersions(ctx context.Context, owner, entityType string) ([]schema.Version, error) {
	return s.schemaVersions(ctx, `SELECT `+schemaVersionColumns+` FROM schema_versions
		WHERE owner_id = $1 AND entity_type = $2 ORDER BY seq`, owner, entityType)
}

// AddSchemaVersion implements schema.Store: one transaction reads
// the owner's last seq, switches off the active version when v is active,
// and inserts v.
func (s *Store) AddSchemaVersion(ctx context.Context, v schema.Version) (schema.Version, error) {
	def, err := json.Marshal(v.Schema)
	if err != nil {
		return v, wrap("encode schema", err)
	}
	exists := &schema.Error{Kind: schema.ErrExists, EntityType: v.EntityType, Version: v.Version, Scope: schema.ScopeOf(v.Owner)}
	err = s.tx(ctx, schemaLock, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_versions WHERE owner_id = $1 AND entity_type = $2 AND version = $3`,
			v.Owner, v.EntityType, v.Version).Scan(&n); err != nil {
			return wrap("read schema", err)
		}
		if n > 0 {
			return exists
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM schema_versions WHERE owner_id = $1 AND entity_type = $2`,
			v.Owner, v.EntityType).Scan(&v.Seq); err != nil {
			return wrap("read schema", err)
		}
		active := 0
		if v.Active {
			active = 1
			if _, err := tx.ExecContext(ctx, `UPDATE schema_versions SET active = 0 WHERE owner_id = $1 AND entity_type = $2 AND active = 1`,
				v.Owner, v.EntityType); err != nil {
				return wrap("deactivate schema", err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_versions (`+schemaVersionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			v.ID, v.Owner, v.EntityType, v.Version, v.Seq, string(def), active, micros(v.CreatedAt), v.CreatedBy)
		if isUnique(err) {
			return exists
		}
		return wrap("insert schema", err)
	})
	return v, err
}

// ActivateSchemaVersion implements schema.Store.
func (s *Store) ActivateSchemaVersion(ctx context.Context, owner, entityType, version string) error {
	return s.tx(ctx, schemaLock, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_versions WHERE owner_id = $1 AND entity_type = $2 AND version = $3`,
			owner, entityType, version).Scan(&n); err != nil {
			return wrap("read schema", err)
		}
		if n == 0 {
			return &schema.Error{Kind: schema.ErrNotFound, EntityType: entityType, Version: version, Scope: schema.ScopeOf(owner)}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_versions SET active = 0 WHERE owner_id = $1 AND entity_type = $2 AND active = 1`, owner, entityType); err != nil {
			return wrap("deactivate schema", err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE schema_versions SET active = 1 WHERE owner_id = $1 AND entity_type = $2 AND version = $3`, owner, entityType, version)
		return wrap("activate schema", err)
	})
}

// PutRecommendations implements schema.Store.
func (s *Store) PutRecommendations(ctx context.Context, rs []schema.Recommendation) error {
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		for _, r := range rs {
			fields, err := json.Marshal(r.Fields)
			if err != nil {
				return wrap("encode recommendation", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_recommendations
				(id, user_id, entity_type, fields, source, confidence, reasoning, status, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (id) DO UPDATE SET confidence = excluded.confidence, reasoning = excluded.reasoning, updated_at = excluded.updated_at
				WHERE schema_recommendations.status = 'pending'`,
				r.ID, r.UserID, r.EntityType, string(fields), r.Source, r.Confidence, r.Reasoning, string(r.Status),
				micros(r.CreatedAt), micros(r.UpdatedAt)); err != nil {
				return wrap("store recommendation", err)
			}
		}
		return nil
	})
}

// Recommendations implements schema.Store.
func (s *Store) Recommendations(ctx context.Context, userID, entityType string) ([]schema.Recommendation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, entity_type, fields, source, confidence, reasoning, status, created_at, updated_at
		FROM schema_recommendations WHERE user_id = $1 AND entity_type = $2 ORDER BY id`, userID, entityType)
	if err != nil {
		return nil, wrap("list recommendations", err)
	}
	defer rows.Close()
	var out []schema.Recommendation
	for rows.Next() {
		var r schema.Recommendation
		var fields, status string
		var created, updated int64
		if err := rows.Scan(&r.ID, &r.UserID, &r.EntityType, &fields, &r.Source, &r.Confidence, &r.Reasoning, &status, &created, &updated); err != nil {
			return nil, wrap("read recommendation", err)
		}
		if err := json.Unmarshal([]byte(fields), &r.Fields); err != nil {
			return nil, wrap("decode recommendation", err)
		}
		r.Status = schema.RecommendationStatus(status)
		r.CreatedAt, r.UpdatedAt = fromMicros(sql.NullInt64{Int64: created, Valid: true}), fromMicros(sql.NullInt64{Int64: updated, Valid: true})
		out = append(out, r)
	}
	return out, wrap("list recommendations", rows.Err())
}

// SetRecommendationStatus implements schema.Store.
func (s *Store) SetRecommendationStatus(ctx context.Context, userID, id string, status schema.RecommendationStatus) error {
	res, err := s.db.ExecContext(ctx, `UPDATE schema_recommendations SET status = $3, updated_at = $4 WHERE user_id = $1 AND id = $2`,
		userID, id, string(status), micros(s.now()))
	if err != nil {
		return wrap("update recommendation", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(wrap("update recommendation", err), fmt.Errorf("recommendation %s: %w", id, schema.ErrNotFound))
	}
	return nil
}

// AutoEnhance implements schema.Store.
func (s *Store) AutoEnhance(ctx context.Context, userID string) (bool, error) {
	var on int
	err := s.db.QueryRowContext(ctx, `SELECT auto_enhance FROM schema_settings WHERE user_id = $1`, userID).Scan(&on)
	if isNoRows(err) {
		return true, nil
	}
	return on == 1, wrap("read schema settings", err)
}

// SetAutoEnhance implements schema.Store.
func (s *Store) SetAutoEnhance(ctx context.Context, userID string, on bool) error {
	v := 0
	if on {
		v = 1
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO schema_settings (user_id, auto_enhance, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id) DO UPDATE SET auto_enhance = excluded.auto_enhance, updated_at = excluded.updated_at`, userID, v, micros(s.now()))
	return wrap("write schema settings", err)
}

// RelationshipTypes implements schema.Store.
func (s *Store) RelationshipTypes(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM cairn_relationship_types WHERE user_id = $1 ORDER BY name`, userID)
	if err != nil {
		return nil, wrap("read relationship types", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, wrap("read relationship types", err)
		}
		out = append(out, name)
	}
	return out, wrap("read relationship types", rows.Err())
}

// RegisterRelationshipType implements schema.Store: one insert
// that does nothing for a type registered already.
func (s *Store) RegisterRelationshipType(ctx context.Context, userID, name string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO cairn_relationship_types (user_id, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, name) DO NOTHING`, userID, name, micros(at))
	if err != nil {
		return false, wrap("register relationship type", err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrap("register relationship type", err)
}

// OwnerSchemaVersions returns every schema version of an owner ("" for
// the global ones), by type then seq: what cairn export writes.
func (s *Store) OwnerSchemaVersions(ctx context.Context, owner string) ([]schema.Version, error) {
	return s.schemaVersions(ctx, `SELECT `+schemaVersionColumns+` FROM schema_versions
		WHERE owner_id = $1 ORDER BY entity_type, seq`, owner)
}

// ImportSchemaVersions writes exported schema versions, in one
// transaction, keeping their ids, times and authors, and returns how many
// were new. A version the store holds already (same owner, type and
// version) is left as it is, so importing twice writes once. A new version
// keeps its seq unless the store gives that seq to another version of the
// type (then it takes the next free one), and is active when it was
// exported active and the store has no active version of the type yet: a
// store's own choice of active version is kept.
func (s *Store) ImportSchemaVersions(ctx context.Context, vs []schema.Version) (int, error) {
	n := 0
	err := s.tx(ctx, schemaLock, func(tx *sql.Tx) error {
		n = 0
		for _, v := range vs {
			if v.Schema == nil {
				return fmt.Errorf("controlplane: import schema %s: no definition", v.ID)
			}
			var have int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_versions WHERE owner_id = $1 AND entity_type = $2 AND version = $3`,
				v.Owner, v.EntityType, v.Version).Scan(&have); err != nil {
				return wrap("read schema", err)
			}
			if have > 0 {
				continue
			}
			var seqTaken, activeTaken int
			if err := tx.QueryRowContext(ctx, `SELECT
				(SELECT count(*) FROM schema_versions WHERE owner_id = $1 AND entity_type = $2 AND seq = $3),
				(SELECT count(*) FROM schema_versions WHERE owner_id = $1 AND entity_type = $2 AND active = 1)`,
				v.Owner, v.EntityType, v.Seq).Scan(&seqTaken, &activeTaken); err != nil {
				return wrap("read schema", err)
			}
			if seqTaken > 0 || v.Seq <= 0 {
				if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM schema_versions WHERE owner_id = $1 AND entity_type = $2`,
					v.Owner, v.EntityType).Scan(&v.Seq); err != nil {
					return wrap("read schema", err)
				}
			}
			active := 0
			if v.Active && activeTaken == 0 {
				active = 1
			}
			def, err := json.Marshal(v.Schema)
			if err != nil {
				return wrap("encode schema", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_versions (`+schemaVersionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				v.ID, v.Owner, v.EntityType, v.Version, v.Seq, string(def), active, micros(v.CreatedAt), v.CreatedBy); err != nil {
				return wrap("import schema", err)
			}
			n++
		}
		return nil
	})
	return n, err
}
