package controlplane

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// bootstrapLock serialises first-run bootstraps across processes on
// PostgreSQL ("owner" in ASCII).
const bootstrapLock int64 = 0x6f776e6572

// Bootstrap is the outcome of first-run set-up.
type Bootstrap struct {
	User  consent.User
	Agent consent.Agent
	KeyID string
	// Created is true when this call created the owner (the store was
	// empty); the caller then shows the key once.
	Created bool
}

// EnsureOwner creates the owner user, its owner agent and an owner key with
// the given hash, if the store has no owner yet. Concurrent callers agree on
// one owner.
func (s *Store) EnsureOwner(ctx context.Context, userName, keyHash, keyPrefix string) (Bootstrap, error) {
	var b Bootstrap
	err := s.tx(ctx, bootstrapLock, func(tx *sql.Tx) error {
		u, err := scanUser(tx.QueryRowContext(ctx, `SELECT id, name, is_owner FROM users WHERE is_owner = TRUE`))
		if err == nil {
			b.User = u
			b.Agent, err = scanAgent(tx.QueryRowContext(ctx, `SELECT id, user_id, name FROM agents WHERE user_id = $1 AND name = $2`, u.ID, consent.OwnerAgent))
			return wrap("read owner agent", err)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return wrap("read owner", err)
		}
		now := micros(s.now())
		b.User = consent.User{ID: newUUID(), Name: userName, IsOwner: true}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, name, is_owner, created_at) VALUES ($1, $2, TRUE, $3)`, b.User.ID, b.User.Name, now); err != nil {
			return wrap("create owner", err)
		}
		b.Agent = consent.Agent{ID: newID("agt_"), UserID: b.User.ID, Name: consent.OwnerAgent}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, user_id, name, created_at) VALUES ($1, $2, $3, $4)`, b.Agent.ID, b.User.ID, b.Agent.Name, now); err != nil {
			return wrap("create owner agent", err)
		}
		b.KeyID = newID("key_")
		if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, user_id, agent_id, key_hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			b.KeyID, b.User.ID, b.Agent.ID, keyHash, keyPrefix, now); err != nil {
			return wrap("create owner key", err)
		}
		b.Created = true
		return nil
	})
	return b, err
}

// OwnerPrincipal returns the principal of the owner's owner agent, which is
// who stdio runs as by default.
func (s *Store) OwnerPrincipal(ctx context.Context) (consent.Principal, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT id, name, is_owner FROM users WHERE is_owner = TRUE`))
	if errors.Is(err, sql.ErrNoRows) {
		return consent.Principal{}, fmt.Errorf("controlplane: no owner yet: %w", ErrNotFound)
	}
	if err != nil {
		return consent.Principal{}, wrap("read owner", err)
	}
	return s.AgentPrincipal(ctx, u.Name, consent.OwnerAgent)
}

// AgentPrincipal returns the principal of a named agent of a named user.
func (s *Store) AgentPrincipal(ctx context.Context, userName, agentName string) (consent.Principal, error) {
	return s.agentPrincipal(ctx, `u.name = $1 AND a.name = $2`, userName, agentName,
		fmt.Sprintf("agent %q of user %q", agentName, userName))
}

// AgentPrincipalByID returns the principal of an agent of a user by ids
// (what an OAuth grant records).
func (s *Store) AgentPrincipalByID(ctx context.Context, userID, agentID string) (consent.Principal, error) {
	return s.agentPrincipal(ctx, `u.id = $1 AND a.id = $2`, userID, agentID, fmt.Sprintf("agent %s of user %s", agentID, userID))
}

// agentPrincipal reads the principal of the agent a condition on users u
// and agents a selects; what names it for ErrNotFound.
func (s *Store) agentPrincipal(ctx context.Context, where, user, agent, what string) (consent.Principal, error) {
	var p consent.Principal
	var owner bool
	err := s.db.QueryRowContext(ctx, `SELECT u.id, u.name, u.is_owner, a.id, a.name FROM users u
		JOIN agents a ON a.user_id = u.id WHERE `+where, user, agent).
		Scan(&p.UserID, &p.UserName, &owner, &p.AgentID, &p.AgentName)
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("controlplane: %s: %w", what, ErrNotFound)
	}
	if err != nil {
		return p, wrap("read agent", err)
	}
	p.Owner = owner && p.AgentName == consent.OwnerAgent
	return p, nil
}

// KeyByHash implements consent.KeyStore.
func (s *Store) KeyByHash(ctx context.Context, hash string) (consent.Key, consent.Principal, error) {
	var k consent.Key
	var p consent.Principal
	var owner bool
	var created int64
	var expires, revoked, used sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT k.id, k.user_id, k.agent_id, k.prefix, k.created_at, k.expires_at, k.revoked_at,
		k.last_used_at, u.name, u.is_owner, a.name
		FROM api_keys k JOIN users u ON u.id = k.user_id JOIN agents a ON a.id = k.agent_id
		WHERE k.key_hash = $1`, hash).
		Scan(&k.ID, &k.UserID, &k.AgentID, &k.Prefix, &created, &expires, &revoked, &used, &p.UserName, &owner, &k.AgentName)
	if errors.Is(err, sql.ErrNoRows) {
		return k, p, consent.ErrUnknownKey
	}
	if err != nil {
		return k, p, wrap("read key", err)
	}
	k.CreatedAt = time.UnixMicro(created).UTC()
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = fromMicros(expires), fromMicros(revoked), fromMicros(used)
	p.UserID, p.AgentID, p.AgentName, p.KeyID = k.UserID, k.AgentID, k.AgentName, k.ID
	p.Owner = owner && k.AgentName == consent.OwnerAgent
	return k, p, nil
}

// TouchKey implements consent.KeyStore.
func (s *Store) TouchKey(ctx context.Context, keyID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, keyID, micros(at))
	return wrap("touch key", err)
}

func scanUser(row *sql.Row) (consent.User, error) {
	var u consent.User
	err := row.Scan(&u.ID, &u.Name, &u.IsOwner)
	return u, err
}

func scanAgent(row *sql.Row) (consent.Agent, error) {
	var a consent.Agent
	err := row.Scan(&a.ID, &a.UserID, &a.Name)
	return a, err
}
