package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/consent"
)

// TransferTable is a control-plane table of one user's data that cairn
// export copies row by row and cairn import writes back as it was: the
// same SQL, with the same column types, runs on SQLite and PostgreSQL.
type TransferTable struct {
	Name    string
	Columns []string
	// Order is the ORDER BY that gives its rows in a stable order.
	Order string
}

// Transfer tables: what a user's export holds of the control plane, by
// what it needs (agents before the consent rules that name them).
var (
	TableProfiles     = TransferTable{"profiles", []string{"user_id", "data", "version", "updated_at"}, "user_id"}
	TableProfileLog   = TransferTable{"profile_changes", []string{"user_id", "version", "patch", "reason", "agent_id", "changed_at"}, "version"}
	TableContradicts  = TransferTable{"contradictions", []string{"id", "user_id", "entity_id", "entity_type", "field", "current_value", "current_observation_id", "current_source_id", "new_value", "new_observation_id", "new_source_id", "detected_at", "status", "resolution", "resolved_at", "resolved_by", "correction_id"}, "id"}
	TableRejected     = TransferTable{"rejected_observations", []string{"user_id", "observation_id", "entity_id", "contradiction_id", "rejected_at"}, "observation_id"}
	TableAgents       = TransferTable{"agents", []string{"id", "user_id", "name", "created_at"}, "id"}
	TableConsentRules = TransferTable{"consent_rules", []string{"id", "user_id", "agent_id", "pattern", "action", "effect", "created_at"}, "id"}
	// The user's schema recommendations and auto-enhance setting (the
	// schema versions themselves are lines of their own: see
	// OwnerSchemaVersions).
	TableSchemaRecommendations = TransferTable{"schema_recommendations", []string{"id", "user_id", "entity_type", "fields", "source", "confidence", "reasoning", "status", "created_at", "updated_at"}, "id"}
	TableSchemaSettings        = TransferTable{"schema_settings", []string{"user_id", "auto_enhance", "updated_at"}, "user_id"}
	// The relationship types the user registered by using them.
	TableRelationshipTypes = TransferTable{"cairn_relationship_types", []string{"user_id", "name", "created_at"}, "name"}
	// What forgetting graph data leaves (issue 37): retractions, which an
	// import carries so that a retracted observation keeps not counting,
	// and tombstones, which keep an import of an older export from
	// bringing erased entities and sources back (transfer skips them).
	TableGraphRetractions = TransferTable{"graph_retractions", []string{"user_id", "observation_id", "kind", "subject_id", "source_id", "retracted_at", "actor", "reason"}, "observation_id"}
	TableGraphTombstones  = TransferTable{"graph_tombstones", []string{"user_id", "kind", "id", "erased_at", "actor", "reason", "counts"}, "kind, id"}
)

// TransferTables lists every transfer table, in the order an import
// writes them.
var TransferTables = []TransferTable{TableProfiles, TableProfileLog, TableContradicts, TableRejected, TableAgents, TableConsentRules,
	TableSchemaRecommendations, TableSchemaSettings, TableRelationshipTypes, TableGraphRetractions, TableGraphTombstones}

// TransferTableNamed returns the transfer table of that name.
func TransferTableNamed(name string) (TransferTable, bool) {
	i := slices.IndexFunc(TransferTables, func(t TransferTable) bool { return t.Name == name })
	if i < 0 {
		return TransferTable{}, false
	}
	return TransferTables[i], true
}

// ExportRows calls fn with each of the user's rows of table, as column →
// value (string, int64, float64 or nil), in the table's order.
func (s *Store) ExportRows(ctx context.Context, table TransferTable, userID string, fn func(map[string]any) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(table.Columns, ", ")+` FROM `+table.Name+
		` WHERE user_id = $1 ORDER BY `+table.Order, userID)
	if err != nil {
		return wrap("export "+table.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		vals := make([]any, len(table.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return wrap("export "+table.Name, err)
		}
		row := make(map[string]any, len(vals))
		for i, c := range table.Columns {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			row[c] = vals[i]
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return wrap("export "+table.Name, rows.Close())
}

// ImportRows writes rows (as ExportRows gives them, or as JSON decodes
// them with json.Number) into table, keeping every row whose key exists
// already as it is, and returns how many it wrote: importing the same rows
// twice writes them once.
func (s *Store) ImportRows(ctx context.Context, table TransferTable, rows []map[string]any) (int, error) {
	created, err := s.ImportRowsEach(ctx, table, rows)
	n := 0
	for _, c := range created {
		if c {
			n++
		}
	}
	return n, err
}

// ImportRowsEach is ImportRows that says which rows it wrote: created[i]
// is false for a row whose key (or unique name) the table held already.
// An import needs to know which agents it created, since it writes
// consent rules only for those.
func (s *Store) ImportRowsEach(ctx context.Context, table TransferTable, rows []map[string]any) ([]bool, error) {
	var created []bool
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		created = make([]bool, len(rows))
		ph := make([]string, len(table.Columns))
		for i := range ph {
			ph[i] = fmt.Sprintf("$%d", i+1)
		}
		q := `INSERT INTO ` + table.Name + ` (` + strings.Join(table.Columns, ", ") + `) VALUES (` +
			strings.Join(ph, ", ") + `) ON CONFLICT DO NOTHING`
		for j, row := range rows {
			args := make([]any, len(table.Columns))
			for i, c := range table.Columns {
				v, err := columnValue(row[c])
				if err != nil {
					return fmt.Errorf("controlplane: import %s: column %s: %w", table.Name, c, err)
				}
				args[i] = v
			}
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return wrap("import "+table.Name, err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return wrap("import "+table.Name, err)
			}
			created[j] = k > 0
		}
		return nil
	})
	return created, err
}

// CheckTransferRow applies to a row of an import the checks the API
// applies to the same row when an agent or a rule is set: an agent needs
// an id and a valid name; a consent rule an id, an agent, and a pattern,
// action and effect that SetRule accepts. Other tables are checked by
// their columns' types only.
func CheckTransferRow(table TransferTable, row map[string]any) error {
	str := func(c string) string { s, _ := row[c].(string); return s }
	switch table.Name {
	case TableAgents.Name:
		if str("id") == "" {
			return errors.New("controlplane: an agent without an id")
		}
		return checkName("agent", str("name"))
	case TableConsentRules.Name:
		if str("id") == "" || str("agent_id") == "" {
			return errors.New("controlplane: a consent rule without an id or an agent")
		}
		if _, err := consent.NormalizePattern(str("pattern")); err != nil {
			return err
		}
		if _, err := consent.ParseAction(str("action")); err != nil {
			return err
		}
		_, err := consent.ParseEffect(str("effect"))
		return err
	}
	return nil
}

// columnValue turns a decoded JSON value into a column value: integers to
// int64, other numbers to float64.
func columnValue(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		return v.Float64()
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
		return v, nil
	case nil, string, int64, bool:
		return v, nil
	default:
		return nil, fmt.Errorf("unexpected value %T", v)
	}
}

// ErrUserClash is returned by ImportUser when the user's name belongs to
// another user id, or the id to another name.
var ErrUserClash = errors.New("controlplane: user clash")

// ImportUser makes sure user u exists with its id and name: it does
// nothing when it does, creates it otherwise (as the owner, with the owner
// agent, when u was the owner of its store and this store has none yet),
// and returns an error wrapping ErrUserClash when the id or the name is
// another user's. It reports whether it created the user.
func (s *Store) ImportUser(ctx context.Context, u consent.User) (bool, error) {
	if err := checkName("user", u.Name); err != nil {
		return false, err
	}
	created := false
	err := s.tx(ctx, bootstrapLock, func(tx *sql.Tx) error {
		created = false
		var id, name string
		err := tx.QueryRowContext(ctx, `SELECT id, name FROM users WHERE id = $1 OR name = $2`, u.ID, u.Name).Scan(&id, &name)
		if err == nil {
			if id != u.ID || name != u.Name {
				return fmt.Errorf("%w: the export's user %s (%q) meets user %s (%q) in this store", ErrUserClash, u.ID, u.Name, id, name)
			}
			return nil
		}
		if !isNoRows(err) {
			return wrap("read user", err)
		}
		owner := false
		if u.IsOwner {
			err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE is_owner = TRUE`).Scan(&id)
			switch {
			case isNoRows(err):
				owner = true
			case err != nil:
				return wrap("read owner", err)
			}
		}
		now := micros(s.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, name, is_owner, created_at) VALUES ($1, $2, $3, $4)`,
			u.ID, u.Name, owner, now); err != nil {
			return wrap("create user", err)
		}
		if owner {
			if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, user_id, name, created_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT DO NOTHING`, newID("agt_"), u.ID, consent.OwnerAgent, now); err != nil {
				return wrap("create owner agent", err)
			}
		}
		created = true
		return nil
	})
	return created, err
}
