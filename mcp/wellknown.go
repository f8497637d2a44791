package mcp

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cairnkg/cairn/consent"
)

// protectedResourcePath is where RFC 9728 puts the metadata of the resource
// /mcp; the same document is also served at the root well-known path, which
// clients try next.
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// apiKeyDocs explains how to get and send a key, for a server without an
// authorization server.
const apiKeyDocs = "https://github.com/cairnkg/cairn/blob/main/docs/consent.md#authentication-over-http"

// oauthDocs explains how hosts connect by URL with OAuth.
const oauthDocs = "https://github.com/cairnkg/cairn/blob/main/docs/oauth.md"

// OAuthServer is the authorization server (package oauth) as the HTTP
// surface uses it: its endpoints, and the verification of its access
// tokens on /mcp, the REST facade and the console's API.
type OAuthServer interface {
	// Handler serves the authorization server's endpoints (Paths).
	Handler() http.Handler
	// Paths are the path patterns Handler answers.
	Paths() []string
	// Owns reports whether a bearer credential is an access token of the
	// server rather than an API key.
	Owns(token string) bool
	// Verify returns the principal an access token acts as, or an error
	// when it is unknown, expired, revoked or for another resource.
	Verify(r *http.Request, token string) (consent.Principal, error)
	// Issuer and Resource are the issuer identifier and the URL of /mcp
	// as clients reach them.
	Issuer(r *http.Request) string
	Resource(r *http.Request) string
}

// credentials are what authenticate accepts: API keys, and the access
// tokens of the authorization server when there is one.
type credentials struct {
	keys  *consent.Authenticator
	oauth OAuthServer
}

func (o HTTPOptions) credentials() credentials { return credentials{keys: o.Auth, oauth: o.OAuth} }

// resourceURL is the URL of /mcp as clients reach it.
func (c credentials) resourceURL(r *http.Request) string {
	if c.oauth != nil {
		return c.oauth.Resource(r)
	}
	return baseURL(r) + "/mcp"
}

// serveProtectedResource answers the RFC 9728 metadata of /mcp, without a
// key, listing the authorization server when there is one. The SDK's
// auth.ProtectedResourceMetadataHandler serves a fixed document with its
// own CORS policy; Cairn's resource URL depends on the Host the client
// used, and CORS is the same as on every route, so only the SDK's document
// type is used.
func (c credentials) serveProtectedResource(w http.ResponseWriter, r *http.Request) {
	meta := oauthex.ProtectedResourceMetadata{
		Resource:               c.resourceURL(r),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Cairn",
		ResourceDocumentation:  apiKeyDocs,
	}
	if c.oauth != nil {
		meta.AuthorizationServers = []string{c.oauth.Issuer(r)}
		meta.ScopesSupported = []string{"cairn:read", "cairn:write"}
		meta.ResourceDocumentation = oauthDocs
	}
	writeJSON(w, http.StatusOK, meta)
}

// resourceMetadataURL is the absolute URL of the metadata of /mcp, which
// every 401 names in WWW-Authenticate.
func (c credentials) resourceMetadataURL(r *http.Request) string {
	base := baseURL(r)
	if c.oauth != nil {
		base = c.oauth.Issuer(r)
	}
	return base + protectedResourcePath + "/mcp"
}

// baseURL is scheme://host of the request as the client addressed it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
