package controlplane

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairnkg/cairn/knowledge"
)

// The Store keeps user profiles for the knowledge service.
var _ knowledge.ProfileStore = (*Store)(nil)

// Profile returns a user's profile; a user without one gets an empty
// object at version 0.
func (s *Store) Profile(ctx context.Context, userID string) (knowledge.Profile, error) {
	p, err := scanProfile(s.db.QueryRowContext(ctx, `SELECT data, version, updated_at FROM profiles WHERE user_id = $1`, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return knowledge.Profile{Data: map[string]any{}}, nil
	}
	return p, wrap("read profile", err)
}

// UpdateProfile replaces a profile's data with apply(current) and appends
// change to its history, in one transaction. Concurrent updates of one
// profile serialise on its row (the write lock on SQLite, a row lock on
// PostgreSQL), so none is lost.
func (s *Store) UpdateProfile(ctx context.Context, userID string, change knowledge.ProfileChange,
	apply func(map[string]any) (map[string]any, error)) (knowledge.Profile, knowledge.ProfileChange, error) {
	var p knowledge.Profile
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		now := micros(change.ChangedAt)
		// Make sure the row exists, then lock it by touching it.
		if _, err := tx.ExecContext(ctx, `INSERT INTO profiles (user_id, data, version, updated_at) VALUES ($1, '{}', 0, $2)
			ON CONFLICT (user_id) DO NOTHING`, userID, now); err != nil {
			return wrap("create profile", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE profiles SET version = version WHERE user_id = $1`, userID); err != nil {
			return wrap("lock profile", err)
		}
		cur, err := scanProfile(tx.QueryRowContext(ctx, `SELECT data, version, updated_at FROM profiles WHERE user_id = $1`, userID))
		if err != nil {
			return wrap("read profile", err)
		}
		next, err := apply(cur.Data)
		if err != nil {
			return err
		}
		data, err := json.Marshal(next)
		if err != nil {
			return wrap("encode profile", err)
		}
		patch, err := json.Marshal(change.Patch)
		if err != nil {
			return wrap("encode profile patch", err)
		}
		change.Version = cur.Version + 1
		if _, err := tx.ExecContext(ctx, `UPDATE profiles SET data = $2, version = $3, updated_at = $4 WHERE user_id = $1`,
			userID, string(data), change.Version, now); err != nil {
			return wrap("write profile", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO profile_changes (user_id, version, patch, reason, agent_id, changed_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, userID, change.Version, string(patch), change.Reason, change.AgentID, now); err != nil {
			return wrap("record profile change", err)
		}
		p = knowledge.Profile{Data: next, Version: change.Version, UpdatedAt: fromMicros(sql.NullInt64{Int64: now, Valid: true})}
		change.ChangedAt = p.UpdatedAt
		return nil
	})
	if err != nil {
		return knowledge.Profile{}, knowledge.ProfileChange{}, err
	}
	return p, change, nil
}

// ProfileHistory returns up to limit changes of a profile, newest first
// (limit ≤ 0 means 100).
func (s *Store) ProfileHistory(ctx context.Context, userID string, limit int) ([]knowledge.ProfileChange, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, patch, reason, agent_id, changed_at FROM profile_changes
		WHERE user_id = $1 ORDER BY version DESC LIMIT $2`, userID, limit)
	if err != nil {
		return nil, wrap("read profile history", err)
	}
	defer rows.Close()
	out := []knowledge.ProfileChange{}
	for rows.Next() {
		var c knowledge.ProfileChange
		var patch string
		var at int64
		if err := rows.Scan(&c.Version, &patch, &c.Reason, &c.AgentID, &at); err != nil {
			return nil, wrap("read profile history", err)
		}
		if err := decodeObject(patch, &c.Patch); err != nil {
			return nil, wrap("read profile history", err)
		}
		c.ChangedAt = fromMicros(sql.NullInt64{Int64: at, Valid: true})
		out = append(out, c)
	}
	return out, wrap("read profile history", rows.Err())
}

func scanProfile(row *sql.Row) (knowledge.Profile, error) {
	var p knowledge.Profile
	var data string
	var at int64
	if err := row.Scan(&data, &p.Version, &at); err != nil {
		return knowledge.Profile{}, err
	}
	if err := decodeObject(data, &p.Data); err != nil {
		return knowledge.Profile{}, err
	}
	p.UpdatedAt = fromMicros(sql.NullInt64{Int64: at, Valid: true})
	return p, nil
}

// decodeObject decodes a stored JSON object, keeping numbers exact.
func decodeObject(s string, into *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("decode stored JSON: %w", err)
	}
	if *into == nil {
		*into = map[string]any{}
	}
	return nil
}
