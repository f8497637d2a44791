package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ory/fosite"

	"github.com/cairnkg/cairn/controlplane"
)

// Token kinds as the control plane stores them.
const (
	kindCode    = "code"
	kindPKCE    = "pkce"
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// keptForm are the request parameters kept with a stored grant: those the
// token endpoint compares with the authorization request (redirect_uri,
// the PKCE challenge). Everything else, codes, verifiers and refresh
// tokens above all, is dropped before storage.
var keptForm = []string{"redirect_uri", "code_challenge", "code_challenge_method", "response_type", "scope", "resource"}

// storedRequest is a grant as the control plane keeps it.
type storedRequest struct {
	ID                string              `json:"id"`
	RequestedAt       time.Time           `json:"requested_at"`
	ClientID          string              `json:"client_id"`
	RequestedScopes   []string            `json:"requested_scopes"`
	GrantedScopes     []string            `json:"granted_scopes"`
	RequestedAudience []string            `json:"requested_audience"`
	GrantedAudience   []string            `json:"granted_audience"`
	Form              map[string][]string `json:"form"`
	Session           json.RawMessage     `json:"session"`
}

// storage is fosite's storage on the control plane: its ClientManager,
// the authorization code, access and refresh token, revocation and PKCE
// storages. Tokens are kept under the SHA-256 of their HMAC signature, so
// that neither the database nor a backup of it can be turned into a token.
type storage struct {
	cp *controlplane.Store
	// audience returns the resource URLs a request's clients may ask
	// tokens for (this server's /mcp).
	audience func(ctx context.Context) []string
}

// hashSignature is the key a token is stored under.
func hashSignature(sig string) string {
	h := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(h[:])
}

// client is a registered client as fosite sees it.
type client struct {
	fosite.DefaultClient
	name string
}

// GetClient implements fosite.ClientManager.
func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	c, err := s.cp.OAuthClient(ctx, id)
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.toFosite(ctx, c)
}

func (s *storage) toFosite(ctx context.Context, c controlplane.OAuthClient) (*client, error) {
	var meta registration
	if err := json.Unmarshal(c.Metadata, &meta); err != nil {
		return nil, fmt.Errorf("oauth: client %s metadata: %w", c.ID, err)
	}
	return &client{name: c.Name, DefaultClient: fosite.DefaultClient{
		ID:            c.ID,
		Secret:        []byte(c.SecretHash),
		RedirectURIs:  meta.RedirectURIs,
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"},
		Scopes:        supportedScopes,
		Audience:      s.audience(ctx),
		Public:        c.SecretHash == "",
	}}, nil
}

// ClientAssertionJWTValid implements fosite.ClientManager; Cairn accepts
// no JWT client assertions, so no JTI is ever known.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT implements fosite.ClientManager.
func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

func (s *storage) create(ctx context.Context, kind, signature string, req fosite.Requester, expiryOf fosite.TokenType) error {
	blob, err := marshalRequest(req)
	if err != nil {
		return err
	}
	exp := req.GetSession().GetExpiresAt(expiryOf)
	if exp.IsZero() {
		exp = time.Now().Add(100 * 365 * 24 * time.Hour)
	}
	return s.cp.CreateOAuthToken(ctx, controlplane.OAuthToken{SignatureHash: hashSignature(signature), Kind: kind,
		RequestID: req.GetID(), ClientID: req.GetClient().GetID(), ExpiresAt: exp, Request: blob})
}

// get returns a stored grant; an inactive one comes back with inactiveErr.
func (s *storage) get(ctx context.Context, kind, signature string, session fosite.Session, inactiveErr error) (fosite.Requester, error) {
	t, err := s.cp.OAuthToken(ctx, kind, hashSignature(signature))
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		return nil, fosite.ErrNotFound
	case errors.Is(err, controlplane.ErrInactive):
		req, uerr := s.unmarshalRequest(ctx, t.Request, session)
		if uerr != nil {
			return nil, uerr
		}
		return req, inactiveErr
	case err != nil:
		return nil, err
	}
	return s.unmarshalRequest(ctx, t.Request, session)
}

func marshalRequest(req fosite.Requester) ([]byte, error) {
	sess, err := json.Marshal(req.GetSession())
	if err != nil {
		return nil, fmt.Errorf("oauth: session: %w", err)
	}
	form := url.Values{}
	for _, k := range keptForm {
		if v, ok := req.GetRequestForm()[k]; ok {
			form[k] = v
		}
	}
	return json.Marshal(storedRequest{ID: req.GetID(), RequestedAt: req.GetRequestedAt(), ClientID: req.GetClient().GetID(),
		RequestedScopes: req.GetRequestedScopes(), GrantedScopes: req.GetGrantedScopes(),
		RequestedAudience: req.GetRequestedAudience(), GrantedAudience: req.GetGrantedAudience(), Form: form, Session: sess})
}

func (s *storage) unmarshalRequest(ctx context.Context, blob []byte, session fosite.Session) (fosite.Requester, error) {
	var sr storedRequest
	if err := json.Unmarshal(blob, &sr); err != nil {
		return nil, fmt.Errorf("oauth: stored request: %w", err)
	}
	c, err := s.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, err
	}
	if session == nil {
		session = newSession("", "", "")
	}
	if err := json.Unmarshal(sr.Session, session); err != nil {
		return nil, fmt.Errorf("oauth: stored session: %w", err)
	}
	return &fosite.Request{ID: sr.ID, RequestedAt: sr.RequestedAt, Client: c, RequestedScope: sr.RequestedScopes,
		GrantedScope: sr.GrantedScopes, RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: sr.Form, Session: session}, nil
}

// CreateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, code string, req fosite.Requester) error {
	return s.create(ctx, kindCode, code, req, fosite.AuthorizeCode)
}

// GetAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage: a code
// already exchanged comes back with ErrInvalidatedAuthorizeCode, on which
// fosite revokes every token that code gave.
func (s *storage) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindCode, code, session, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession implements oauth2.AuthorizeCodeStorage.
// Of two exchanges of one code racing each other, only the first to mark
// it used gets tokens.
func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	ok, err := s.cp.DeactivateOAuthToken(ctx, kindCode, hashSignature(code))
	if err == nil && !ok {
		return fosite.ErrInvalidatedAuthorizeCode
	}
	return err
}

// CreatePKCERequestSession implements pkce.PKCERequestStorage.
func (s *storage) CreatePKCERequestSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindPKCE, signature, req, fosite.AuthorizeCode)
}

// GetPKCERequestSession implements pkce.PKCERequestStorage.
func (s *storage) GetPKCERequestSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindPKCE, signature, session, fosite.ErrNotFound)
}

// DeletePKCERequestSession implements pkce.PKCERequestStorage.
func (s *storage) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.cp.DeleteOAuthToken(ctx, kindPKCE, hashSignature(signature))
}

// CreateAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) CreateAccessTokenSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindAccess, signature, req, fosite.AccessToken)
}

// GetAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) GetAccessTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindAccess, signature, session, fosite.ErrInactiveToken)
}

// DeleteAccessTokenSession implements oauth2.AccessTokenStorage.
func (s *storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.cp.DeleteOAuthToken(ctx, kindAccess, hashSignature(signature))
}

// CreateRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (s *storage) CreateRefreshTokenSession(ctx context.Context, signature, _ string, req fosite.Requester) error {
	return s.create(ctx, kindRefresh, signature, req, fosite.RefreshToken)
}

// GetRefreshTokenSession implements oauth2.RefreshTokenStorage: a rotated
// or revoked refresh token comes back with ErrInactiveToken, which fosite
// treats as reuse and answers by revoking the whole family.
func (s *storage) GetRefreshTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindRefresh, signature, session, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession implements oauth2.RefreshTokenStorage.
func (s *storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.cp.DeleteOAuthToken(ctx, kindRefresh, hashSignature(signature))
}

// RotateRefreshToken implements oauth2.RefreshTokenStorage: the grant's
// refresh tokens become inactive (kept, so that presenting one again is
// seen as reuse) and its access tokens are deleted. The presented token is
// marked used first, conditionally: of two refreshes with one token racing
// each other, the second finds it used, which is reuse, and the grant is
// revoked rather than split into two live families.
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	ok, err := s.cp.DeactivateOAuthToken(ctx, kindRefresh, hashSignature(signature))
	if err != nil {
		return err
	}
	if err := s.cp.DeactivateOAuthFamily(ctx, kindRefresh, requestID); err != nil {
		return err
	}
	if err := s.cp.DeleteOAuthFamily(ctx, kindAccess, requestID); err != nil {
		return err
	}
	if !ok {
		return fosite.ErrInactiveToken
	}
	return nil
}

// RevokeRefreshToken implements oauth2.TokenRevocationStorage.
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.cp.DeactivateOAuthFamily(ctx, kindRefresh, requestID)
}

// RevokeAccessToken implements oauth2.TokenRevocationStorage.
func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.cp.DeleteOAuthFamily(ctx, kindAccess, requestID)
}

// secretHasher is fosite's client secret hasher. Client secrets are 256
// random bits that Cairn generates, so, as for API keys, a fast hash is
// enough (bcrypt would spend a core's worth of time on every token
// request for nothing).
type secretHasher struct{}

// Hash implements fosite.Hasher.
func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	h := sha256.Sum256(data)
	return []byte(hex.EncodeToString(h[:])), nil
}

// Compare implements fosite.Hasher.
func (secretHasher) Compare(_ context.Context, hash, data []byte) error {
	h := sha256.Sum256(data)
	if subtle.ConstantTimeCompare(hash, []byte(hex.EncodeToString(h[:]))) != 1 {
		return fosite.ErrNotFound
	}
	return nil
}
