package mcp

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// protectedResourcePath is where RFC 9728 puts the metadata of the resource
// /mcp; the same document is also served at the root well-known path, which
// clients try next.
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// apiKeyDocs explains how to get and send a key: Cairn has no authorization
// server, so the metadata lists none and points here instead.
const apiKeyDocs = "https://github.com/cairnkg/cairn/blob/main/docs/consent.md#authentication-over-http"

// serveProtectedResource answers the RFC 9728 metadata of /mcp, without a
// key. The SDK's auth.ProtectedResourceMetadataHandler serves a fixed
// document with its own CORS policy; Cairn's resource URL depends on the
// Host the client used, and CORS is the same as on every route, so only the
// SDK's document type is used.
func serveProtectedResource(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, oauthex.ProtectedResourceMetadata{
		Resource:               baseURL(r) + "/mcp",
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Cairn",
		ResourceDocumentation:  apiKeyDocs,
	})
}

// resourceMetadataURL is the absolute URL of the metadata of /mcp, which
// every 401 names in WWW-Authenticate.
func resourceMetadataURL(r *http.Request) string {
	return baseURL(r) + protectedResourcePath + "/mcp"
}

// baseURL is scheme://host of the request as the client addressed it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
