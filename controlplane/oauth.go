package controlplane

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// ErrInactive reports an OAuth token that exists but was rotated or
// revoked; the row is returned with it, so that the authorization server
// can tell reuse from a token it never issued.
var ErrInactive = errors.New("controlplane: token inactive")

// OAuthClient is a client registered with the authorization server (RFC
// 7591). Metadata is its registration document as JSON; SecretHash is
// empty for a public client.
type OAuthClient struct {
	ID         string
	SecretHash string
	Name       string
	Metadata   []byte
	// Remote is the address that registered the client, shown on the
	// consent page ("from where").
	Remote    string
	CreatedAt time.Time
	// UserID and AgentID name the agent the owner's consent created for
	// the client; empty until the first approval.
	UserID     string
	AgentID    string
	AgentName  string
	LastUsedAt time.Time
}

// OAuthToken is one authorization code, PKCE request, access or refresh
// token, stored under a hash of its signature. Request is the grant as the
// authorization server serialises it; RequestID is shared by every token of
// one grant (the family a reused refresh token revokes).
type OAuthToken struct {
	SignatureHash string
	Kind          string
	RequestID     string
	ClientID      string
	Active        bool
	ExpiresAt     time.Time
	Request       []byte
}

// CreateOAuthClient registers a client.
func (s *Store) CreateOAuthClient(ctx context.Context, c OAuthClient) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_clients (id, secret_hash, name, metadata, remote, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, c.SecretHash, c.Name, string(c.Metadata), c.Remote, micros(s.now()))
	if isUnique(err) {
		return fmt.Errorf("controlplane: oauth client %s: %w", c.ID, ErrExists)
	}
	return wrap("create oauth client", err)
}

const oauthClientColumns = `c.id, c.secret_hash, c.name, c.metadata, c.remote, c.created_at, COALESCE(c.user_id, ''),
	COALESCE(c.agent_id, ''), COALESCE(a.name, ''), c.last_used_at`

func scanOAuthClient(row interface{ Scan(...any) error }) (OAuthClient, error) {
	var c OAuthClient
	var meta string
	var created int64
	var used sql.NullInt64
	err := row.Scan(&c.ID, &c.SecretHash, &c.Name, &meta, &c.Remote, &created, &c.UserID, &c.AgentID, &c.AgentName, &used)
	c.Metadata, c.CreatedAt, c.LastUsedAt = []byte(meta), time.UnixMicro(created).UTC(), fromMicros(used)
	return c, err
}

// OAuthClient returns a registered client.
func (s *Store) OAuthClient(ctx context.Context, id string) (OAuthClient, error) {
	c, err := scanOAuthClient(s.db.QueryRowContext(ctx, `SELECT `+oauthClientColumns+`
		FROM oauth_clients c LEFT JOIN agents a ON a.id = c.agent_id WHERE c.id = $1`, id))
	if isNoRows(err) {
		return c, fmt.Errorf("controlplane: oauth client %s: %w", id, ErrNotFound)
	}
	return c, wrap("read oauth client", err)
}

// ListOAuthClients returns the clients a user approved, newest first.
func (s *Store) ListOAuthClients(ctx context.Context, userID string) ([]OAuthClient, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+oauthClientColumns+`
		FROM oauth_clients c LEFT JOIN agents a ON a.id = c.agent_id WHERE c.user_id = $1 ORDER BY c.created_at DESC, c.id`, userID)
	if err != nil {
		return nil, wrap("list oauth clients", err)
	}
	defer rows.Close()
	var out []OAuthClient
	for rows.Next() {
		c, err := scanOAuthClient(rows)
		if err != nil {
			return nil, wrap("list oauth clients", err)
		}
		out = append(out, c)
	}
	return out, wrap("list oauth clients", rows.Err())
}

// TouchOAuthClient records that a client's token was used at a time.
func (s *Store) TouchOAuthClient(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1`, id, micros(at))
	return wrap("touch oauth client", err)
}

// ConnectOAuthClient binds a client to an agent of a user with exactly the
// given rules: the agent is created on the first approval (named
// agentName, or agentName with a suffix when taken), and a later approval
// replaces its rules. It returns the agent.
func (s *Store) ConnectOAuthClient(ctx context.Context, clientID, userID, agentName string, rules []consent.Rule) (consent.Agent, error) {
	if err := checkName("agent", agentName); err != nil {
		return consent.Agent{}, err
	}
	for i := range rules {
		p, err := consent.NormalizePattern(rules[i].Pattern)
		if err != nil {
			return consent.Agent{}, err
		}
		rules[i].Pattern = p
		if rules[i].Action, err = consent.ParseAction(string(rules[i].Action)); err != nil {
			return consent.Agent{}, err
		}
		if rules[i].Effect, err = consent.ParseEffect(string(rules[i].Effect)); err != nil {
			return consent.Agent{}, err
		}
	}
	var agent consent.Agent
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		var agentID string
		err := tx.QueryRowContext(ctx, `SELECT COALESCE(agent_id, '') FROM oauth_clients WHERE id = $1`, clientID).Scan(&agentID)
		if isNoRows(err) {
			return fmt.Errorf("controlplane: oauth client %s: %w", clientID, ErrNotFound)
		}
		if err != nil {
			return wrap("read oauth client", err)
		}
		now := micros(s.now())
		if agentID == "" {
			agent = consent.Agent{ID: newID("agt_"), UserID: userID, Name: agentName}
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE user_id = $1 AND name = $2`, userID, agentName).Scan(&taken); err != nil {
				return wrap("read agents", err)
			}
			if taken > 0 {
				agent.Name = agentName[:min(len(agentName), maxNameLen-9)] + "-" + agent.ID[4:12]
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, user_id, name, created_at) VALUES ($1, $2, $3, $4)`,
				agent.ID, userID, agent.Name, now); err != nil {
				return wrap("create agent", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE oauth_clients SET user_id = $2, agent_id = $3 WHERE id = $1`, clientID, userID, agent.ID); err != nil {
				return wrap("bind oauth client", err)
			}
		} else {
			if agent, err = scanAgent(tx.QueryRowContext(ctx, `SELECT id, user_id, name FROM agents WHERE id = $1 AND user_id = $2`, agentID, userID)); err != nil {
				return wrap("read agent", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM consent_rules WHERE agent_id = $1 AND user_id = $2`, agentID, userID); err != nil {
				return wrap("replace rules", err)
			}
		}
		for _, r := range rules {
			if _, err := tx.ExecContext(ctx, `INSERT INTO consent_rules (id, user_id, agent_id, pattern, action, effect, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (user_id, agent_id, pattern, action) DO UPDATE SET effect = EXCLUDED.effect`,
				newID("rule_"), userID, agent.ID, r.Pattern, string(r.Action), string(r.Effect), now); err != nil {
				return wrap("set rule", err)
			}
		}
		return nil
	})
	return agent, err
}

// DisconnectOAuthClient removes every token of a client and the rules of
// its agent, at once: its next call is refused. The client stays
// registered, so that the owner may approve it again. It returns how many
// tokens it removed.
func (s *Store) DisconnectOAuthClient(ctx context.Context, clientID, userID string) (int64, error) {
	var n int64
	err := s.tx(ctx, 0, func(tx *sql.Tx) error {
		var agentID string
		err := tx.QueryRowContext(ctx, `SELECT COALESCE(agent_id, '') FROM oauth_clients WHERE id = $1 AND user_id = $2`, clientID, userID).Scan(&agentID)
		if isNoRows(err) {
			return fmt.Errorf("controlplane: oauth client %s: %w", clientID, ErrNotFound)
		}
		if err != nil {
			return wrap("read oauth client", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE client_id = $1`, clientID)
		if err != nil {
			return wrap("delete oauth tokens", err)
		}
		n, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, `DELETE FROM consent_rules WHERE agent_id = $1 AND user_id = $2`, agentID, userID)
		return wrap("delete rules", err)
	})
	return n, err
}

// CreateOAuthToken stores a token.
func (s *Store) CreateOAuthToken(ctx context.Context, t OAuthToken) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_tokens (signature_hash, kind, request_id, client_id, active, expires_at, request, created_at)
		VALUES ($1, $2, $3, $4, TRUE, $5, $6, $7)`, t.SignatureHash, t.Kind, t.RequestID, t.ClientID, micros(t.ExpiresAt), string(t.Request), micros(s.now()))
	if isUnique(err) {
		return fmt.Errorf("controlplane: oauth token: %w", ErrExists)
	}
	return wrap("create oauth token", err)
}

// OAuthToken returns a token of a kind by its signature hash, or
// ErrNotFound; an inactive token is returned with ErrInactive.
func (s *Store) OAuthToken(ctx context.Context, kind, signatureHash string) (OAuthToken, error) {
	t := OAuthToken{SignatureHash: signatureHash, Kind: kind}
	var expires int64
	var req string
	err := s.db.QueryRowContext(ctx, `SELECT request_id, client_id, active, expires_at, request FROM oauth_tokens
		WHERE signature_hash = $1 AND kind = $2`, signatureHash, kind).Scan(&t.RequestID, &t.ClientID, &t.Active, &expires, &req)
	if isNoRows(err) {
		return t, fmt.Errorf("controlplane: oauth %s: %w", kind, ErrNotFound)
	}
	if err != nil {
		return t, wrap("read oauth token", err)
	}
	t.ExpiresAt, t.Request = time.UnixMicro(expires).UTC(), []byte(req)
	if !t.Active {
		return t, ErrInactive
	}
	return t, nil
}

// DeleteOAuthToken removes one token.
func (s *Store) DeleteOAuthToken(ctx context.Context, kind, signatureHash string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE signature_hash = $1 AND kind = $2`, signatureHash, kind)
	return wrap("delete oauth token", err)
}

// DeactivateOAuthToken marks one active token used (an authorization code
// once exchanged, a refresh token once rotated), keeping it so that a replay
// is recognised. It reports whether this call did it: of two concurrent
// callers, one only sees true.
func (s *Store) DeactivateOAuthToken(ctx context.Context, kind, signatureHash string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE oauth_tokens SET active = FALSE WHERE signature_hash = $1 AND kind = $2 AND active`, signatureHash, kind)
	if err != nil {
		return false, wrap("deactivate oauth token", err)
	}
	n, err := res.RowsAffected()
	return n == 1, wrap("deactivate oauth token", err)
}

// DeactivateOAuthFamily marks every token of a kind of one grant inactive
// (refresh tokens rotated or revoked: kept, so that reuse is detected).
func (s *Store) DeactivateOAuthFamily(ctx context.Context, kind, requestID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE oauth_tokens SET active = FALSE WHERE request_id = $1 AND kind = $2`, requestID, kind)
	return wrap("deactivate oauth tokens", err)
}

// DeleteOAuthFamily removes every token of a kind of one grant.
func (s *Store) DeleteOAuthFamily(ctx context.Context, kind, requestID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE request_id = $1 AND kind = $2`, requestID, kind)
	return wrap("delete oauth tokens", err)
}

// PruneOAuthTokens removes tokens that expired before a time.
func (s *Store) PruneOAuthTokens(ctx context.Context, before time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE expires_at < $1`, micros(before))
	return wrap("prune oauth tokens", err)
}

// OAuthSecret returns the named secret of the authorization server,
// creating it (32 random bytes, hex) on first use; concurrent first users
// across processes agree on one.
func (s *Store) OAuthSecret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("controlplane: oauth secret: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO oauth_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, hex.EncodeToString(b)); err != nil {
		return nil, wrap("create oauth secret", err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM oauth_secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, wrap("read oauth secret", err)
	}
	return hex.DecodeString(v)
}

// Now returns the store's clock reading.
func (s *Store) Now() time.Time { return s.now() }

// PutOAuthClientDocument records a client whose id is the URL of its
// metadata document (the MCP specification's client ID metadata
// documents), or updates the name and metadata of one already recorded,
// keeping its agent.
func (s *Store) PutOAuthClientDocument(ctx context.Context, c OAuthClient) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_clients (id, secret_hash, name, metadata, remote, created_at)
		VALUES ($1, '', $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, metadata = EXCLUDED.metadata`,
		c.ID, c.Name, string(c.Metadata), c.Remote, micros(s.now()))
	return wrap("put oauth client document", err)
}
