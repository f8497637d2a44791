package main

import (
	"context"
	"flag"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/oauth"
)

// oauthFlags configure serve's authorization server (docs/oauth.md).
type oauthFlags struct {
	off       *bool
	accessTTL *time.Duration
}

var oauthEnv = []envVar{{"no-oauth", "CAIRN_NO_OAUTH"}, {"oauth-access-token-ttl", "CAIRN_OAUTH_ACCESS_TOKEN_TTL"}}

func (f *oauthFlags) register(fs *flag.FlagSet) {
	f.off = fs.Bool("no-oauth", false, "serve no OAuth authorization server: /mcp then takes API keys only")
	f.accessTTL = fs.Duration("oauth-access-token-ttl", oauth.DefaultAccessTokenTTL,
		"lifetime of an OAuth access token; clients refresh it with their rotating refresh token")
}

// server returns the authorization server of serve, or nil with --no-oauth.
// publicURL, when set, is its issuer and the base of the resource URL
// tokens are bound to.
func (f *oauthFlags) server(ctx context.Context, a *app, publicURL string) (*oauth.Server, error) {
	if *f.off {
		return nil, nil
	}
	return oauth.New(ctx, oauth.Options{Store: a.control, Audit: a.audit, Logger: a.log.With("component", "oauth"),
		PublicURL: publicURL, AccessTokenTTL: *f.accessTTL,
		SignIn: func(ctx context.Context, key string) (consent.Principal, error) { return a.auth.Authenticate(ctx, key) }})
}
