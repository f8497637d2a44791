package main

import (
	"github.com/cairnkg/cairn/console"
	"github.com/cairnkg/cairn/mcp"
)

// console returns the web console's routes for serve: its embedded pages,
// and its owner API over the control plane (the agents and keys cairn admin
// manages) and of the OAuth clients the owner approved (nil: none),
// recording the owner's changes in the audit log.
func (a *app) console(oauthClients console.OAuthClients) *mcp.ConsoleRoutes {
	return &mcp.ConsoleRoutes{
		Assets: console.Assets(),
		API: console.API(console.APIOptions{Store: a.control, Principal: mcp.PrincipalFrom, Audit: a.audit,
			Logger: a.log.With("component", "console"), OAuth: oauthClients}),
	}
}
