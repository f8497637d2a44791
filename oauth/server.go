package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
)

// Scopes a client may ask for. They narrow what the consent page offers
// (a client that asks for read only is offered no write); what a token may
// do is decided by its agent's consent rules.
const (
	ScopeRead    = "cairn:read"
	ScopeWrite   = "cairn:write"
	scopeOffline = "offline_access"
)

var supportedScopes = []string{ScopeRead, ScopeWrite, scopeOffline}

// Default lifetimes.
const (
	DefaultAccessTokenTTL  = 15 * time.Minute
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	// codeTTL is how long an authorization code may wait for its exchange.
	codeTTL = time.Minute
)

// Paths the server answers.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	openIDPath    = "/.well-known/openid-configuration"
	AuthorizePath = "/console/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
)

// Rate classes of the token and registration endpoints, counted per remote
// address.
const (
	RateClassToken    consent.RateClass = "oauth_token"
	RateClassRegister consent.RateClass = "oauth_register"
)

// DefaultLimits are the per-address limits per minute of the token and
// registration endpoints.
var DefaultLimits = map[consent.RateClass]int{RateClassToken: 60, RateClassRegister: 10}

// ErrInvalidToken is what Verify returns for an access token that is
// unknown, expired, revoked or for another resource.
var ErrInvalidToken = errors.New("invalid, expired or revoked OAuth access token")

// Recorder writes audit records (consent.AuditLog).
type Recorder interface {
	Record(ctx context.Context, records ...consent.AuditRecord) error
}

// Options configure a Server.
type Options struct {
	// Store is the control plane. Required.
	Store *controlplane.Store
	// Audit receives a record of every grant, refusal and revocation.
	// Required.
	Audit Recorder
	// SignIn checks the owner's API key on the consent page. Required.
	SignIn func(ctx context.Context, key string) (consent.Principal, error)
	// Logger; nil discards.
	Logger *slog.Logger
	// PublicURL is the scheme://host[:port] clients reach the server at,
	// the issuer and the base of the resource URL (behind a reverse
	// proxy). Empty: taken from each request's Host.
	PublicURL string
	// AccessTokenTTL is an access token's lifetime; 0 means
	// DefaultAccessTokenTTL.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is a refresh token's lifetime; 0 means
	// DefaultRefreshTokenTTL.
	RefreshTokenTTL time.Duration
	// ClientDocuments fetches client ID metadata documents; nil: a client
	// that reaches public addresses only and follows no redirect.
	ClientDocuments *http.Client
	// Limiter counts token and registration requests per remote address
	// (RateClassToken, RateClassRegister); nil: a limiter on Store with
	// DefaultLimits.
	Limiter *consent.Limiter
}

// Server is the authorization server.
type Server struct {
	opts      Options
	provider  fosite.OAuth2Provider
	docClient *http.Client
	store     *storage
	log       *slog.Logger
	secret    []byte

	mu      sync.Mutex
	touched map[string]time.Time
	// issued counts tokens issued, to prune expired ones now and then.
	issued atomic.Int64
}

// pruneEvery is how many token responses pass between two prunings of
// expired codes and tokens.
const pruneEvery = 256

type resourceKey struct{}

// New returns the authorization server, reading (or creating) its signing
// secret in the control plane.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.AccessTokenTTL <= 0 {
		opts.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if opts.RefreshTokenTTL <= 0 {
		opts.RefreshTokenTTL = DefaultRefreshTokenTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Limiter == nil {
		opts.Limiter = consent.NewLimiter(opts.Store, consent.LimiterOptions{Limits: DefaultLimits})
	}
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	secret, err := opts.Store.OAuthSecret(ctx, "hmac")
	if err != nil {
		return nil, err
	}
	st := &storage{cp: opts.Store, audience: func(ctx context.Context) []string {
		if r, ok := ctx.Value(resourceKey{}).(string); ok {
			return []string{r}
		}
		return nil
	}}
	cfg := &fosite.Config{
		AccessTokenLifespan:            opts.AccessTokenTTL,
		RefreshTokenLifespan:           opts.RefreshTokenTTL,
		AuthorizeCodeLifespan:          codeTTL,
		GlobalSecret:                   secret,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       exactAudience,
		ClientSecretsHasher:            secretHasher{},
		// Every grant gets a refresh token, offline_access or not: hosts
		// stay connected until the owner disconnects them.
		RefreshTokenScopes: []string{},
		// Hosts match redirect URIs exactly; loopback ports vary (RFC
		// 8252), which fosite allows.
		SendDebugMessagesToClients: false,
		// OAuth 2.1 makes state optional once PKCE binds the code to the
		// client's request (several MCP hosts send none); fosite's default
		// asks for 8 characters, -1 lets any through.
		MinParameterEntropy: -1,
	}
	provider := compose.Compose(cfg, st, compose.NewOAuth2HMACStrategy(cfg),
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2PKCEFactory,
	)
	docClient := opts.ClientDocuments
	if docClient == nil {
		docClient = publicDocumentClient()
	}
	return &Server{opts: opts, provider: provider, docClient: docClient, store: st, log: opts.Logger, secret: secret,
		touched: map[string]time.Time{}}, nil
}

// exactAudience is the audience rule of RFC 8707 as MCP uses it: every
// requested resource must be one the client may have, exactly.
func exactAudience(allowed, requested []string) error {
	for _, r := range requested {
		if !slices.Contains(allowed, strings.TrimSuffix(r, "/")) {
			return &fosite.RFC6749Error{ErrorField: "invalid_target", CodeField: http.StatusBadRequest,
				DescriptionField: fmt.Sprintf("The resource %q is not served by this authorization server.", r)}
		}
	}
	return nil
}

// base is scheme://host of the server as clients reach it.
func (s *Server) base(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return s.opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Issuer returns the issuer identifier for a request.
func (s *Server) Issuer(r *http.Request) string { return s.base(r) }

// Resource returns the resource URL tokens are bound to: this server's
// /mcp (the REST facade under /mcp/ is the same resource).
func (s *Server) Resource(r *http.Request) string { return s.base(r) + "/mcp" }

// withResource puts the request's resource into ctx for the storage, and
// turns RFC 8707's resource parameter into fosite's audience (no resource
// means this server's).
func (s *Server) withResource(r *http.Request) *http.Request {
	ctx := context.WithValue(r.Context(), resourceKey{}, s.Resource(r))
	r = r.WithContext(ctx)
	if err := r.ParseForm(); err == nil {
		if res := r.Form["resource"]; len(res) > 0 {
			r.Form["audience"] = res
		} else if r.Form.Get("grant_type") != "refresh_token" {
			r.Form["audience"] = []string{s.Resource(r)}
		}
	}
	return r
}

// Handler serves the metadata, registration, authorization (the consent
// page), token and revocation endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+MetadataPath, s.metadata)
	mux.HandleFunc("GET "+MetadataPath+"/mcp", s.metadata)
	mux.HandleFunc("GET "+openIDPath, s.metadata)
	mux.HandleFunc("GET "+openIDPath+"/mcp", s.metadata)
	mux.HandleFunc("POST "+RegisterPath, s.limited(RateClassRegister, s.register))
	mux.HandleFunc("GET "+AuthorizePath, s.authorizePage)
	// The consent form checks the owner's key: limited like the token
	// endpoint, so that it is no oracle for guessing keys.
	mux.HandleFunc("POST "+AuthorizePath, s.limited(RateClassToken, s.authorizeSubmit))
	mux.HandleFunc("POST "+TokenPath, s.limited(RateClassToken, s.token))
	mux.HandleFunc("POST "+RevokePath, s.limited(RateClassToken, s.revoke))
	return mux
}

// Paths lists the path patterns Handler serves, for the caller's mux.
func (s *Server) Paths() []string {
	return []string{MetadataPath, MetadataPath + "/", openIDPath, openIDPath + "/", RegisterPath, AuthorizePath, TokenPath, RevokePath}
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	b := s.base(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                     b,
		"authorization_endpoint":                     b + AuthorizePath,
		"token_endpoint":                             b + TokenPath,
		"registration_endpoint":                      b + RegisterPath,
		"revocation_endpoint":                        b + RevokePath,
		"scopes_supported":                           supportedScopes,
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":      []string{"none", "client_secret_basic", "client_secret_post"},
		"revocation_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":           []string{"S256"},
		"client_id_metadata_document_supported":      true,
		"service_documentation":                      "https://github.com/cairnkg/cairn/blob/main/docs/oauth.md",
	})
}

// limited refuses with 429 a remote address over its limit of a class.
func (s *Server) limited(class consent.RateClass, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		v, err := s.opts.Limiter.Allow(r.Context(), "addr:"+host, class)
		if err != nil {
			s.log.Error("oauth rate limit", "err", err)
			writeOAuthError(w, http.StatusInternalServerError, "server_error", "")
			return
		}
		if !v.Allowed {
			w.Header().Set("Retry-After", fmt.Sprint(int(v.RetryAfter.Seconds()+0.999)))
			writeOAuthError(w, http.StatusTooManyRequests, "slow_down", "too many requests from this address; retry later")
			return
		}
		next(w, r)
	}
}

// token is the token endpoint: code exchange and refresh.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r = s.withResource(r)
	ctx := r.Context()
	ar, err := s.provider.NewAccessRequest(ctx, r, newSession("", "", ""))
	if err != nil {
		s.refused(ctx, r, "oauth.token", clientOf(ar, r), err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	for _, a := range ar.GetRequestedAudience() {
		ar.GrantAudience(a)
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.refused(ctx, r, "oauth.token", clientOf(ar, r), err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.granted(ctx, ar, "oauth.token."+strings.Join(ar.GetGrantTypes(), " "))
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
	if s.issued.Add(1)%pruneEvery == 0 {
		if err := s.opts.Store.PruneOAuthTokens(ctx, time.Now()); err != nil {
			s.log.Warn("oauth: prune expired tokens", "err", err)
		}
	}
}

// revoke is the revocation endpoint (RFC 7009): it answers 200 for a
// token it does not know, as the RFC asks.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r = s.withResource(r)
	ctx := r.Context()
	err := s.provider.NewRevocationRequest(ctx, r)
	if err != nil {
		s.refused(ctx, r, "oauth.revoke", r.Form.Get("client_id"), err)
	} else {
		s.auditClient(ctx, r.Form.Get("client_id"), "oauth.revoke", consent.Allow, "OK")
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// Owns reports whether a bearer credential is one of this server's access
// tokens (fosite's prefix) rather than an API key.
func (s *Server) Owns(token string) bool { return strings.HasPrefix(token, "ory_at_") }

// Verify returns the principal an access token acts as, if the token is
// active and was issued for this server's resource; otherwise an error
// wrapping ErrInvalidToken. Each refusal is logged without the token.
func (s *Server) Verify(r *http.Request, token string) (consent.Principal, error) {
	ctx := context.WithValue(r.Context(), resourceKey{}, s.Resource(r))
	sess := newSession("", "", "")
	_, ar, err := s.provider.IntrospectToken(ctx, token, fosite.AccessToken, sess)
	if err != nil {
		return consent.Principal{}, fmt.Errorf("%w: %s", ErrInvalidToken, fosite.ErrorToRFC6749Error(err).ErrorField)
	}
	if !slices.Contains(ar.GetGrantedAudience(), s.Resource(r)) {
		s.auditClient(ctx, ar.GetClient().GetID(), "oauth.verify", consent.Deny, "invalid_target")
		return consent.Principal{}, fmt.Errorf("%w: the token was issued for another resource", ErrInvalidToken)
	}
	p, err := s.opts.Store.AgentPrincipalByID(ctx, sess.userID(), sess.agentID())
	if err != nil {
		return consent.Principal{}, fmt.Errorf("%w: its agent: %v", ErrInvalidToken, err)
	}
	p.KeyID = ar.GetClient().GetID()
	p.Owner = false // a token never acts as the owner agent
	s.touch(ctx, p.KeyID)
	return p, nil
}

// touch records a client's last use, at most once a minute.
func (s *Server) touch(ctx context.Context, clientID string) {
	now := time.Now()
	s.mu.Lock()
	last, ok := s.touched[clientID]
	if ok && now.Sub(last) < time.Minute {
		s.mu.Unlock()
		return
	}
	s.touched[clientID] = now
	s.mu.Unlock()
	if err := s.opts.Store.TouchOAuthClient(ctx, clientID, now); err != nil {
		s.log.Warn("oauth: record client use", "err", err)
	}
}

// ListOAuthClients returns the clients a user approved.
func (s *Server) ListOAuthClients(ctx context.Context, userID string) ([]controlplane.OAuthClient, error) {
	return s.opts.Store.ListOAuthClients(ctx, userID)
}

// Disconnect revokes every token of a client of a user at once and removes
// its agent's rules; the next call with one of its tokens is refused.
func (s *Server) Disconnect(ctx context.Context, p consent.Principal, clientID string) error {
	n, err := s.opts.Store.DisconnectOAuthClient(ctx, clientID, p.UserID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.touched, clientID)
	s.mu.Unlock()
	s.log.Info("oauth client disconnected", "client", clientID, "tokens", n)
	return s.record(ctx, consent.AuditRecord{UserID: p.UserID, AgentID: p.AgentID, AgentName: p.AgentName, KeyID: p.KeyID,
		Tool: "oauth.disconnect", Resource: "oauth/" + clientID, Decision: consent.Allow, ResultCode: "OK"})
}

// clientOf is the client a token request names, for the audit log.
func clientOf(ar fosite.AccessRequester, r *http.Request) string {
	if ar != nil && ar.GetClient() != nil {
		return ar.GetClient().GetID()
	}
	if id, _, ok := r.BasicAuth(); ok {
		return id
	}
	return r.Form.Get("client_id")
}
