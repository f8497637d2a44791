package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/console"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/oauth"
)

func TestOAuthClientsOwnerView(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	audit := consent.NewAuditLog(f.store, consent.AuditLogOptions{})
	t.Cleanup(func() { _ = audit.Close() })
	srv, err := oauth.New(ctx, oauth.Options{Store: f.store, Audit: audit,
		SignIn: consent.NewAuthenticator(f.store, nil).Authenticate})
	if err != nil {
		t.Fatal(err)
	}
	api := console.API(console.APIOptions{Store: f.store, OAuth: srv, Principal: func(ctx context.Context) (consent.Principal, bool) {
		p, ok := ctx.Value(principalKey{}).(consent.Principal)
		return p, ok
	}})
	f.api = api
	if err := f.store.CreateOAuthClient(ctx, controlplane.OAuthClient{ID: "oac_1", Name: "Host", Metadata: []byte(`{"redirect_uris":["https://h.example/cb"]}`), Remote: "192.0.2.7"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ConnectOAuthClient(ctx, "oac_1", f.owner.UserID, "oauth-host",
		[]consent.Rule{{Pattern: "*", Action: consent.Read, Effect: consent.Allow}}); err != nil {
		t.Fatal(err)
	}
	if code, _ := f.do(t, &f.agent, http.MethodGet, "/console/api/oauth/clients", nil); code != http.StatusForbidden {
		t.Errorf("an agent listed the OAuth clients: %d", code)
	}
	code, out := f.do(t, &f.owner, http.MethodGet, "/console/api/oauth/clients", nil)
	clients, _ := out["clients"].([]any)
	if code != http.StatusOK || len(clients) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	c := clients[0].(map[string]any)
	if c["agent"] != "oauth-host" || c["remote"] != "192.0.2.7" || len(c["rules"].([]any)) != 1 {
		t.Errorf("client: %v", c)
	}
	if code, out := f.do(t, &f.owner, http.MethodPost, "/console/api/oauth/clients/oac_1/disconnect", map[string]any{}); code != http.StatusOK {
		t.Fatalf("disconnect: %d %v", code, out)
	}
	_, out = f.do(t, &f.owner, http.MethodGet, "/console/api/oauth/clients", nil)
	if rules := out["clients"].([]any)[0].(map[string]any)["rules"].([]any); len(rules) != 0 {
		t.Errorf("rules after disconnect: %v", rules)
	}
	if code, _ := f.do(t, &f.owner, http.MethodPost, "/console/api/oauth/clients/oac_nope/disconnect", map[string]any{}); code != http.StatusNotFound {
		t.Errorf("disconnect of an unknown client: %d", code)
	}
	recs, err := f.store.QueryAudit(ctx, consent.AuditQuery{UserID: f.owner.UserID, Tool: "oauth.disconnect"})
	if err != nil || len(recs) != 1 {
		t.Errorf("audit of the disconnection: %v %v", recs, err)
	}
}
