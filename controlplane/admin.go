package controlplane

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// maxNameLen bounds user and agent names.
const maxNameLen = 64

// checkName refuses names an admin would regret: empty, too long, or with
// spaces or control characters (they appear in headers and command lines).
func checkName(what, name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("controlplane: %s name must be 1 to %d characters", what, maxNameLen)
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`/\"'`, r) {
			return fmt.Errorf("controlplane: %s name %q: use letters, digits, dots, dashes or underscores", what, name)
		}
	}
	return nil
}

// CreateUser adds a user (not the owner, which first run creates).
func (s *Store) CreateUser(ctx context.Context, name string) (consent.User, error) {
	if err := checkName("user", name); err != nil {
		return consent.User{}, err
	}
	u := consent.User{ID: newUUID(), Name: name}
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (id, name, is_owner, created_at) VALUES ($1, $2, FALSE, $3)`, u.ID, name, micros(s.now()))
	if isUnique(err) {
		return u, fmt.Errorf("controlplane: user %q: %w", name, ErrExists)
	}
	return u, wrap("create user", err)
}

// UserByName returns a user.
func (s *Store) UserByName(ctx context.Context, name string) (consent.User, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT id, name, is_owner FROM users WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("controlplane: user %q: %w", name, ErrNotFound)
	}
	return u, wrap("read user", err)
}

// Owner returns the owner user.
func (s *Store) Owner(ctx context.Context) (consent.User, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT id, name, is_owner FROM users WHERE is_owner = TRUE`))
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("controlplane: no owner yet (run cairn serve or cairn stdio once): %w", ErrNotFound)
	}
	return u, wrap("read owner", err)
}

// ListUsers returns every user, by name.
func (s *Store) ListUsers(ctx context.Context) ([]consent.User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, is_owner FROM users ORDER BY name`)
	if err != nil {
		return nil, wrap("list users", err)
	}
	defer rows.Close()
	var out []consent.User
	for rows.Next() {
		var u consent.User
		if err := rows.Scan(&u.ID, &u.Name, &u.IsOwner); err != nil {
			return nil, wrap("list users", err)
		}
		out = append(out, u)
	}
	return out, wrap("list users", rows.Err())
}

// CreateAgent adds an agent to a user.
func (s *Store) CreateAgent(ctx context.Context, userID, name string) (consent.Agent, error) {
	if err := checkName("agent", name); err != nil {
		return consent.Agent{}, err
	}
	a := consent.Agent{ID: newID("agt_"), UserID: userID, Name: name}
	_, err := s.db.ExecContext(ctx, `INSERT INTO agents (id, user_id, name, created_at) VALUES ($1, $2, $3, $4)`, a.ID, userID, name, micros(s.now()))
	if isUnique(err) {
		return a, fmt.Errorf("controlplane: agent %q: %w", name, ErrExists)
	}
	return a, wrap("create agent", err)
}

// AgentByName returns one agent of a user.
func (s *Store) AgentByName(ctx context.Context, userID, name string) (consent.Agent, error) {
	a, err := scanAgent(s.db.QueryRowContext(ctx, `SELECT id, user_id, name FROM agents WHERE user_id = $1 AND name = $2`, userID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("controlplane: agent %q: %w", name, ErrNotFound)
	}
	return a, wrap("read agent", err)
}

// ListAgents returns a user's agents, by name.
func (s *Store) ListAgents(ctx context.Context, userID string) ([]consent.Agent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, name FROM agents WHERE user_id = $1 ORDER BY name`, userID)
	if err != nil {
		return nil, wrap("list agents", err)
	}
	defer rows.Close()
	var out []consent.Agent
	for rows.Next() {
		var a consent.Agent
		if err := rows.Scan(&a.ID, &a.UserID, &a.Name); err != nil {
			return nil, wrap("list agents", err)
		}
		out = append(out, a)
	}
	return out, wrap("list agents", rows.Err())
}

// CreateKey issues a new key for an agent of a user. It returns the key
// itself, which is shown once and never stored, and its record. A zero
// expiresAt means the key never expires.
func (s *Store) CreateKey(ctx context.Context, userID, agentID string, expiresAt time.Time) (string, consent.Key, error) {
	key, err := consent.NewKey()
	if err != nil {
		return "", consent.Key{}, err
	}
	now := s.now()
	if !expiresAt.IsZero() && !expiresAt.After(now) {
		return "", consent.Key{}, fmt.Errorf("controlplane: a key must expire in the future, not at %s", expiresAt.UTC().Format(time.RFC3339))
	}
	k := consent.Key{ID: newID("key_"), UserID: userID, AgentID: agentID, Prefix: consent.DisplayPrefix(key),
		CreatedAt: time.UnixMicro(micros(now)).UTC(), ExpiresAt: expiresAt}
	// The agent must belong to the user: the insert selects it so.
	res, err := s.db.ExecContext(ctx, `INSERT INTO api_keys (id, user_id, agent_id, key_hash, prefix, created_at, expires_at)
		SELECT $1, $2, a.id, $4, $5, $6, $7 FROM agents a WHERE a.id = $3 AND a.user_id = $2`,
		k.ID, userID, agentID, consent.HashKey(key), k.Prefix, micros(now), nullMicros(expiresAt))
	if err != nil {
		return "", k, wrap("create key", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", k, fmt.Errorf("controlplane: agent %s of user %s: %w", agentID, userID, ErrNotFound)
	}
	return key, k, nil
}

// KeyFilter selects keys in ListKeys.
type KeyFilter struct {
	UserID  string // required
	AgentID string // empty: every agent
}

// ListKeys returns a user's keys, newest first. The keys themselves are not
// stored, only their prefixes.
func (s *Store) ListKeys(ctx context.Context, f KeyFilter) ([]consent.Key, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT k.id, k.user_id, k.agent_id, a.name, k.prefix, k.created_at, k.expires_at, k.revoked_at, k.last_used_at
		FROM api_keys k JOIN agents a ON a.id = k.agent_id
		WHERE k.user_id = $1 AND ($2 = '' OR k.agent_id = $2) ORDER BY k.created_at DESC, k.id`, f.UserID, f.AgentID)
	if err != nil {
		return nil, wrap("list keys", err)
	}
	defer rows.Close()
	var out []consent.Key
	for rows.Next() {
		var k consent.Key
		var created int64
		var expires, revoked, used sql.NullInt64
		if err := rows.Scan(&k.ID, &k.UserID, &k.AgentID, &k.AgentName, &k.Prefix, &created, &expires, &revoked, &used); err != nil {
			return nil, wrap("list keys", err)
		}
		k.CreatedAt = time.UnixMicro(created).UTC()
		k.ExpiresAt, k.RevokedAt, k.LastUsedAt = fromMicros(expires), fromMicros(revoked), fromMicros(used)
		out = append(out, k)
	}
	return out, wrap("list keys", rows.Err())
}

// RevokeKey revokes a key; revoking twice keeps the first time.
func (s *Store) RevokeKey(ctx context.Context, keyID string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, keyID, micros(s.now()))
	if err != nil {
		return wrap("revoke key", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("controlplane: key %s: %w", keyID, ErrNotFound)
	}
	return nil
}
