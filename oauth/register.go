package oauth

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
)

// registration is a client's metadata (RFC 7591 section 2), as registered.
type registration = oauthex.ClientRegistrationMetadata

// maxRegistrationBytes bounds a registration request.
const maxRegistrationBytes = 64 << 10

// maxClientName bounds the name the consent page shows.
const maxClientName = 100

// register is the dynamic client registration endpoint (RFC 7591). Open,
// as the MCP specification expects: a registered client can do nothing
// until the owner approves it on the consent page.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistrationBytes+1))
	if err != nil || len(body) > maxRegistrationBytes {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is unreadable or too large")
		return
	}
	var meta registration
	if err := json.Unmarshal(body, &meta); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is not a JSON object of client metadata")
		return
	}
	code, msg := checkRegistration(&meta)
	if code != "" {
		s.log.Info("oauth registration refused", "error", code, "remote", r.RemoteAddr)
		_ = s.record(ctx, consent.AuditRecord{Tool: "oauth.register", AgentName: "oauth-client", Decision: consent.Deny, ResultCode: code})
		writeOAuthError(w, http.StatusBadRequest, code, msg)
		return
	}
	id := "oac_" + randomHex(12)
	var secret, secretHash string
	if meta.TokenEndpointAuthMethod != "none" {
		secret = "cairn_cs_" + randomHex(32)
		h, _ := secretHasher{}.Hash(ctx, []byte(secret))
		secretHash = string(h)
	}
	stored, _ := json.Marshal(meta)
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if err := s.opts.Store.CreateOAuthClient(ctx, controlplane.OAuthClient{ID: id, SecretHash: secretHash, Name: meta.ClientName,
		Metadata: stored, Remote: host}); err != nil {
		s.log.Error("oauth: register client", "err", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "")
		return
	}
	_ = s.record(ctx, consent.AuditRecord{Tool: "oauth.register", KeyID: id, Resource: "oauth/" + id, AgentName: "oauth-client",
		Decision: consent.Allow, ResultCode: "OK"})
	writeJSON(w, http.StatusCreated, &oauthex.ClientRegistrationResponse{ClientRegistrationMetadata: meta, ClientID: id,
		ClientSecret: secret, ClientIDIssuedAt: time.Now()})
}

// checkRegistration validates and completes client metadata, returning an
// RFC 7591 error code and message when it cannot be accepted.
func checkRegistration(m *registration) (code, msg string) {
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > 10 {
		return "invalid_redirect_uri", "give 1 to 10 redirect_uris"
	}
	for _, raw := range m.RedirectURIs {
		if err := checkRedirectURI(raw); err != nil {
			return "invalid_redirect_uri", err.Error()
		}
	}
	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = "client_secret_basic" // RFC 7591's default
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return "invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post"
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return "invalid_client_metadata", fmt.Sprintf("grant type %q is not supported: only authorization_code and refresh_token", g)
		}
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	if slices.ContainsFunc(m.ResponseTypes, func(t string) bool { return t != "code" }) {
		return "invalid_client_metadata", "only the response type code is supported"
	}
	if m.Scope != "" {
		for _, sc := range strings.Fields(m.Scope) {
			if !slices.Contains(supportedScopes, sc) {
				return "invalid_client_metadata", fmt.Sprintf("scope %q is not supported; scopes: %s", sc, strings.Join(supportedScopes, " "))
			}
		}
	}
	m.ClientName = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, m.ClientName)
	if len([]rune(m.ClientName)) > maxClientName {
		m.ClientName = string([]rune(m.ClientName)[:maxClientName])
	}
	// Secrets and keys of other authentication methods are not kept.
	m.JWKS, m.JWKSURI, m.SoftwareStatement = "", "", ""
	return "", ""
}

// checkRedirectURI accepts an absolute URI without a fragment: https, http
// on a loopback host only (RFC 8252, where any port is then accepted at
// authorization), or a private-use scheme of a native app.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return fmt.Errorf("redirect URI %q is not an absolute URI", raw)
	}
	if u.Fragment != "" {
		return fmt.Errorf("redirect URI %q has a fragment", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		switch u.Hostname() {
		case "localhost", "127.0.0.1", "::1":
		default:
			return fmt.Errorf("redirect URI %q: http is allowed only on a loopback host; use https", raw)
		}
	case "javascript", "data", "file", "vbscript":
		return fmt.Errorf("redirect URI %q: scheme %s is not allowed", raw, u.Scheme)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
