package controlplane

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge"
)

// The Store keeps contradictions for the knowledge service.
var (
	_ knowledge.ContradictionStore = (*Store)(nil)
	_ knowledge.ContradictionStore = (*ContradictionStore)(nil)
)

// ContradictionStore is the Store's contradiction methods with the reads the
// reducer makes (RejectedObservations) on a separate read handle.
//
// The reducer asks for rejected observations inside graph write
// transactions. On the embedded store those hold SQLite's write lock on one
// connection of the write handle, while other writers of the control plane
// may be waiting for the lock on the remaining ones; a read that needed a
// write connection could then wait until their busy timeout. The read-only
// handle never competes with writers.
type ContradictionStore struct {
	*Store
	read *sql.DB
}

// WithReader returns the store's contradiction methods reading rejected
// observations through read (db/sqlite's Read handle on the embedded store;
// on PostgreSQL the same pool is fine).
func (s *Store) WithReader(read *sql.DB) *ContradictionStore {
	return &ContradictionStore{Store: s, read: read}
}

// RejectedObservations implements knowledge.ContradictionStore on the read
// handle.
func (c *ContradictionStore) RejectedObservations(ctx context.Context, userID string, ids []string) (map[string]bool, error) {
	return rejectedObservations(ctx, c.read, userID, ids)
}

const contradictionColumns = `id, user_id, entity_id, entity_type, field, current_value, current_observation_id, current_source_id,
	new_value, new_observation_id, new_source_id, detected_at, status, resolution, resolved_at, resolved_by, correction_id`

// AddContradictions records contradictions; ids already recorded are left
// as they are.
func (s *Store) AddContradictions(ctx context.Context, cs []knowledge.Contradiction) error {
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		for _, c := range cs {
			cur, err := json.Marshal(c.CurrentValue)
			if err != nil {
				return wrap("encode contradiction", err)
			}
			nv, err := json.Marshal(c.NewValue)
			if err != nil {
				return wrap("encode contradiction", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO contradictions (`+contradictionColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
				ON CONFLICT (id) DO NOTHING`,
				c.ID, c.UserID, c.EntityID, c.EntityType, c.Field, string(cur), c.CurrentObservationID, c.CurrentSourceID,
				string(nv), c.NewObservationID, c.NewSourceID, micros(c.DetectedAt), c.Status, string(c.Resolution),
				nullMicros(c.ResolvedAt), c.ResolvedBy, c.CorrectionID); err != nil {
				return wrap("record contradiction", err)
			}
		}
		return nil
	})
}

// OpenContradictions returns up to limit open contradictions, oldest first,
// about entities of the given types (nil: any type; empty: none).
func (s *Store) OpenContradictions(ctx context.Context, userID string, entityTypes []string, limit int) ([]knowledge.Contradiction, error) {
	if entityTypes != nil && len(entityTypes) == 0 {
		return []knowledge.Contradiction{}, nil
	}
	args := []any{userID, knowledge.ContradictionOpen}
	cond := ""
	if entityTypes != nil {
		ph := make([]string, len(entityTypes))
		for i, t := range entityTypes {
			args = append(args, t)
			ph[i] = fmt.Sprintf("$%d", len(args))
		}
		cond = ` AND entity_type IN (` + strings.Join(ph, ", ") + `)`
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+contradictionColumns+` FROM contradictions
		WHERE user_id = $1 AND status = $2`+cond+` ORDER BY detected_at, id LIMIT $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, wrap("list contradictions", err)
	}
	defer rows.Close()
	out := []knowledge.Contradiction{}
	for rows.Next() {
		c, err := scanContradiction(rows)
		if err != nil {
			return nil, wrap("list contradictions", err)
		}
		out = append(out, c)
	}
	return out, wrap("list contradictions", rows.Err())
}

// Contradiction returns one contradiction of a user.
func (s *Store) Contradiction(ctx context.Context, userID, id string) (knowledge.Contradiction, error) {
	c, err := scanContradiction(s.db.QueryRowContext(ctx, `SELECT `+contradictionColumns+` FROM contradictions
		WHERE user_id = $1 AND id = $2`, userID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return knowledge.Contradiction{}, fmt.Errorf("controlplane: contradiction %s: %w", id, knowledge.ErrContradictionNotFound)
	}
	return c, wrap("read contradiction", err)
}

// ResolveContradiction closes an open contradiction and, for a Reject,
// records its new observation as rejected, in one transaction.
func (s *Store) ResolveContradiction(ctx context.Context, r knowledge.Contradiction) error {
	return s.tx(ctx, 0, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE contradictions SET status = $3, resolution = $4, resolved_at = $5, resolved_by = $6, correction_id = $7
			WHERE user_id = $1 AND id = $2 AND status = $8`,
			r.UserID, r.ID, r.Status, string(r.Resolution), nullMicros(r.ResolvedAt), r.ResolvedBy, r.CorrectionID, knowledge.ContradictionOpen)
		if err != nil {
			return wrap("resolve contradiction", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return wrap("resolve contradiction", err)
		} else if n == 0 {
			var status string
			err := tx.QueryRowContext(ctx, `SELECT status FROM contradictions WHERE user_id = $1 AND id = $2`, r.UserID, r.ID).Scan(&status)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("controlplane: contradiction %s: %w", r.ID, knowledge.ErrContradictionNotFound)
			}
			if err != nil {
				return wrap("resolve contradiction", err)
			}
			return fmt.Errorf("controlplane: contradiction %s: %w", r.ID, knowledge.ErrContradictionResolved)
		}
		if r.Resolution != knowledge.Reject {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO rejected_observations (user_id, observation_id, entity_id, contradiction_id, rejected_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, observation_id) DO NOTHING`,
			r.UserID, r.NewObservationID, r.EntityID, r.ID, micros(r.ResolvedAt))
		return wrap("reject observation", err)
	})
}

// ForgetContradictions removes the user's contradictions whose new
// observation is one of ids, open or resolved, and the rejections recorded
// of those observations, in one transaction (knowledge.ContradictionStore).
func (s *Store) ForgetContradictions(ctx context.Context, userID string, ids []string) (int, error) {
	var n int64
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		n = 0
		for start := 0; start < len(ids); start += rejectedChunk {
			in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
			res, err := tx.ExecContext(ctx, `DELETE FROM contradictions WHERE user_id = $1 AND new_observation_id IN (`+in+`)`, args...)
			if err != nil {
				return wrap("forget contradictions", err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return wrap("forget contradictions", err)
			}
			n += k
			if _, err := tx.ExecContext(ctx, `DELETE FROM rejected_observations WHERE user_id = $1 AND observation_id IN (`+in+`)`, args...); err != nil {
				return wrap("forget rejected observations", err)
			}
		}
		return nil
	})
	return int(n), err
}

// CloseRetracted resolves as retracted the open contradictions naming one
// of ids as their current or new observation (knowledge.ContradictionStore).
func (s *Store) CloseRetracted(ctx context.Context, userID string, ids []string, at time.Time, by string) ([]knowledge.Contradiction, error) {
	var out []knowledge.Contradiction
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		out = nil
		for start := 0; start < len(ids); start += rejectedChunk {
			in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
			n := len(args)
			args = append(args, knowledge.ContradictionResolved, string(knowledge.Retracted), micros(at), by, knowledge.ContradictionOpen)
			rows, err := tx.QueryContext(ctx, fmt.Sprintf(`UPDATE contradictions SET status = $%d, resolution = $%d, resolved_at = $%d, resolved_by = $%d
				WHERE user_id = $1 AND status = $%d AND (current_observation_id IN (%s) OR new_observation_id IN (%s))
				RETURNING %s`, n+1, n+2, n+3, n+4, n+5, in, in, contradictionColumns), args...)
			if err != nil {
				return wrap("close retracted contradictions", err)
			}
			cs, err := scanContradictions(rows)
			if err != nil {
				return wrap("close retracted contradictions", err)
			}
			out = append(out, cs...)
		}
		return nil
	})
	return out, err
}

// RetractedContradictions returns the contradictions resolved as retracted
// that name one of ids as their current or new observation
// (knowledge.ContradictionStore).
func (s *Store) RetractedContradictions(ctx context.Context, userID string, ids []string) ([]knowledge.Contradiction, error) {
	var out []knowledge.Contradiction
	for start := 0; start < len(ids); start += rejectedChunk {
		in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
		n := len(args)
		args = append(args, knowledge.ContradictionResolved, string(knowledge.Retracted))
		rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM contradictions
			WHERE user_id = $1 AND status = $%d AND resolution = $%d AND (current_observation_id IN (%s) OR new_observation_id IN (%s))`,
			contradictionColumns, n+1, n+2, in, in), args...)
		if err != nil {
			return nil, wrap("read retracted contradictions", err)
		}
		cs, err := scanContradictions(rows)
		if err != nil {
			return nil, wrap("read retracted contradictions", err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

// ReopenRetracted opens again those of ids resolved as retracted whose
// observations no retraction (graph_retractions) takes out any more
// (knowledge.ContradictionStore).
func (s *Store) ReopenRetracted(ctx context.Context, userID string, ids []string) ([]string, error) {
	var out []string
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		out = nil
		for start := 0; start < len(ids); start += rejectedChunk {
			in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
			n := len(args)
			args = append(args, knowledge.ContradictionOpen, knowledge.ContradictionResolved, string(knowledge.Retracted))
			rows, err := tx.QueryContext(ctx, fmt.Sprintf(`UPDATE contradictions SET status = $%d, resolution = '', resolved_at = NULL, resolved_by = ''
				WHERE user_id = $1 AND id IN (%s) AND status = $%d AND resolution = $%d
				AND NOT EXISTS (SELECT 1 FROM graph_retractions r WHERE r.user_id = contradictions.user_id
					AND r.observation_id IN (contradictions.current_observation_id, contradictions.new_observation_id))
				RETURNING id`, n+1, in, n+2, n+3), args...)
			if err != nil {
				return wrap("reopen contradictions", err)
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return wrap("reopen contradictions", err)
				}
				out = append(out, id)
			}
			if err := rows.Close(); err != nil {
				return wrap("reopen contradictions", err)
			}
			if err := rows.Err(); err != nil {
				return wrap("reopen contradictions", err)
			}
		}
		return nil
	})
	return out, err
}

// scanContradictions reads and closes rows of contradictionColumns.
func scanContradictions(rows *sql.Rows) ([]knowledge.Contradiction, error) {
	defer rows.Close()
	var out []knowledge.Contradiction
	for rows.Next() {
		c, err := scanContradiction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// rejectedChunk bounds the ids of one RejectedObservations query, below
// SQLite's and PostgreSQL's parameter limits.
const rejectedChunk = 500

// userIDsIn returns the placeholders of ids, "$2, $3, …", for a statement
// whose $1 is userID, and the arguments of both.
func userIDsIn(userID string, ids []string) (string, []any) {
	args := append(make([]any, 0, 1+len(ids)), userID)
	ph := make([]string, len(ids))
	for i, id := range ids {
		args = append(args, id)
		ph[i] = fmt.Sprintf("$%d", i+2)
	}
	return strings.Join(ph, ", "), args
}

// RejectedObservations returns which of the given observations a
// resolution rejected or a retraction took out (graph_retractions).
func (s *Store) RejectedObservations(ctx context.Context, userID string, ids []string) (map[string]bool, error) {
	return rejectedObservations(ctx, s.db, userID, ids)
}

func rejectedObservations(ctx context.Context, db *sql.DB, userID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for start := 0; start < len(ids); start += rejectedChunk {
		in, args := userIDsIn(userID, ids[start:min(start+rejectedChunk, len(ids))])
		rows, err := db.QueryContext(ctx, `SELECT observation_id FROM rejected_observations
			WHERE user_id = $1 AND observation_id IN (`+in+`)
			UNION SELECT observation_id FROM graph_retractions
			WHERE user_id = $1 AND observation_id IN (`+in+`)`, args...)
		if err != nil {
			return nil, wrap("read rejected observations", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, wrap("read rejected observations", err)
			}
			out[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, wrap("read rejected observations", err)
		}
		if err := rows.Err(); err != nil {
			return nil, wrap("read rejected observations", err)
		}
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanContradiction(r scanner) (knowledge.Contradiction, error) {
	var c knowledge.Contradiction
	var cur, nv, resolution string
	var detected int64
	var resolved sql.NullInt64
	if err := r.Scan(&c.ID, &c.UserID, &c.EntityID, &c.EntityType, &c.Field, &cur, &c.CurrentObservationID, &c.CurrentSourceID,
		&nv, &c.NewObservationID, &c.NewSourceID, &detected, &c.Status, &resolution, &resolved, &c.ResolvedBy, &c.CorrectionID); err != nil {
		return knowledge.Contradiction{}, err
	}
	var err error
	if c.CurrentValue, err = decodeValue(cur); err != nil {
		return knowledge.Contradiction{}, err
	}
	if c.NewValue, err = decodeValue(nv); err != nil {
		return knowledge.Contradiction{}, err
	}
	c.Resolution = knowledge.Resolution(resolution)
	c.DetectedAt = fromMicros(sql.NullInt64{Int64: detected, Valid: true})
	c.ResolvedAt = fromMicros(resolved)
	return c, nil
}

// decodeValue decodes a stored JSON value, keeping numbers exact.
func decodeValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode stored JSON: %w", err)
	}
	return v, nil
}
