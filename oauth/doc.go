// Package oauth is Cairn's OAuth 2.1 authorization server, as the MCP
// authorization specification (2025-06-18, 2025-11-25) asks of a server
// that hosts connect to by URL: RFC 8414 metadata (also at the OpenID
// discovery path), dynamic client registration (RFC 7591), the
// authorization code grant with PKCE S256 only, resource indicators (RFC
// 8707) that bind every token to this server's /mcp, short-lived access
// tokens, rotating refresh tokens whose reuse revokes the whole grant, and
// revocation (RFC 7009).
//
// The protocol is github.com/ory/fosite's; this package holds what fosite
// leaves to its user: storage on the control plane (storage.go), client
// registration (register.go), the consent page that turns an approval
// into an agent with consent rules (consentpage.go), and the verification
// of access tokens for /mcp and the REST facade (Server.Verify).
//
// A token acts as the agent the owner's approval created for its client:
// consent for what it reads and writes is the same rules, checked the same
// way, as for an API key of that agent.
package oauth
