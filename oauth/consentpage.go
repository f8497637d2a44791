package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ory/fosite"

	"github.com/cairnkg/cairn/consent"
)

// csrfCookie holds the consent page's anti-forgery secret; the form
// carries its HMAC under the server's key.
const csrfCookie = "cairn_oauth_csrf"

// Presets of the consent page: what a client may read and write, as
// consent rules.
var presets = []preset{
	{ID: "read", Label: "Read everything", Rules: []consent.Rule{{Pattern: "*", Action: consent.Read, Effect: consent.Allow}}},
	{ID: "read-but-invoices", Label: "Read everything but invoices", Rules: []consent.Rule{
		{Pattern: "*", Action: consent.Read, Effect: consent.Allow},
		{Pattern: "entities/invoice", Action: consent.Read, Effect: consent.Deny}}},
	{ID: "read-write", Label: "Read and write everything", Write: true, Rules: []consent.Rule{
		{Pattern: "*", Action: consent.Read, Effect: consent.Allow}, {Pattern: "*", Action: consent.Write, Effect: consent.Allow}}},
	{ID: "custom", Label: "Choose per resource below"},
}

type preset struct {
	ID, Label string
	Write     bool
	Rules     []consent.Rule
}

// resources are the rows of the custom choice, as `cairn admin consent`
// names them.
var resources = []struct{ Pattern, Meaning string }{
	{"profile", "your profile"},
	{"entities/*", "every entity type (people, invoices, …)"},
	{"memories/*", "every memory collection"},
	{"graph", "relationships and traversals"},
	{"sources", "source files and documents"},
	{"schema", "the schema registry"},
}

// scopeMeanings say on the page what each scope a client may ask for
// means: what the choices below it may grant.
var scopeMeanings = map[string]string{
	ScopeRead:    "read what you allow below",
	ScopeWrite:   "also write (store, correct, save memories) where you allow it below",
	scopeOffline: "stay connected: refresh its access until you disconnect it",
}

// askedScope is a scope a client asked for, with what it means.
type askedScope struct{ Name, Meaning string }

// asked returns scopes with their meanings, an unknown one saying so.
func asked(scopes []string) []askedScope {
	out := make([]askedScope, len(scopes))
	for i, sc := range scopes {
		m, ok := scopeMeanings[sc]
		if !ok {
			m = "not a scope Cairn knows; it grants nothing"
		}
		out[i] = askedScope{sc, m}
	}
	return out
}

// pageData is what the consent template shows.
type pageData struct {
	Client, ClientID, RedirectHost, Remote string
	Scopes                                 []askedScope
	WriteAllowed                           bool
	Presets                                []preset
	Resources                              []struct{ Pattern, Meaning string }
	Hidden                                 map[string][]string
	CSRF, Nonce, Error                     string
}

var page = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Connect {{.Client}} to Cairn</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="{{.Nonce}}">
body{font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1d232a}
h1{font-size:1.4rem}fieldset{border:1px solid #cdd3da;border-radius:6px;margin:1rem 0}
.who{background:#f3f5f8;padding:.8rem;border-radius:6px}.err{color:#a40e26;font-weight:600}
table{border-collapse:collapse}td{padding:.2rem .6rem}button{font-size:1rem;padding:.4rem 1rem;margin-right:.6rem}
code{font-size:.9em}
</style></head><body>
<h1>Connect <em>{{.Client}}</em> to your Cairn</h1>
<div class="who">
<p><strong>{{.Client}}</strong> (client <code>{{.ClientID}}</code>) asks for access to your knowledge graph and memories.</p>
<p>It will return you to <code>{{.RedirectHost}}</code>{{if .Remote}}; it registered from <code>{{.Remote}}</code>{{end}}.
{{if .Scopes}}Scopes asked:</p>
<ul>{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Meaning}}</li>{{end}}</ul>{{else}}It asked for no scope: read and write may be chosen.</p>{{end}}
</div>
{{if .Error}}<p class="err" role="alert">{{.Error}}</p>{{end}}
<form method="post" autocomplete="off">
{{range $k, $vs := .Hidden}}{{range $vs}}<input type="hidden" name="{{$k}}" value="{{.}}">{{end}}{{end}}
<input type="hidden" name="csrf" value="{{.CSRF}}">
<fieldset><legend>What may it do?</legend>
{{range .Presets}}{{if or (not .Write) $.WriteAllowed}}<label><input type="radio" name="preset" value="{{.ID}}"{{if eq .ID "read"}} checked{{end}}> {{.Label}}</label><br>{{end}}{{end}}
<table><caption>Per resource (with “Choose per resource”)</caption>
{{range .Resources}}<tr><td><code>{{.Pattern}}</code></td><td>{{.Meaning}}</td><td><select name="r:{{.Pattern}}" aria-label="{{.Pattern}}">
<option value="none">no access</option><option value="read" selected>read</option>{{if $.WriteAllowed}}<option value="write">read and write</option>{{end}}</select></td></tr>{{end}}
</table>
<label>Never these entity types (comma-separated): <input name="deny_types" value="" placeholder="invoice, medical_record"></label>
</fieldset>
<fieldset><legend>Sign in as the owner</legend>
<label>Owner API key: <input type="password" name="owner_key" required autocomplete="off" size="40"></label>
</fieldset>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>
<p>Approving creates an agent for this client with exactly these consent rules; its tokens act as that agent.
Disconnect it any time in the console, under <em>Connected clients</em>.</p>
</body></html>`))

// pageHeaders forbid framing (clickjacking), caching and referrers, and
// allow only the page's own style.
func pageHeaders(w http.ResponseWriter, nonce string) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+"'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make the form post Origin: null
	h.Set("X-Content-Type-Options", "nosniff")
}

// csrfToken is the form value a cookie value calls for.
func (s *Server) csrfToken(cookie string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("consent-csrf:" + cookie))
	return hex.EncodeToString(m.Sum(nil))
}

// authorizePage validates an authorization request and shows the consent
// page; an invalid request is answered as fosite answers it (back to a
// valid redirect URI with the error, or an error page).
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) {
	r = s.withResource(r)
	ctx := r.Context()
	if id := r.Form.Get("client_id"); isClientDocumentURL(id) {
		if err := s.fetchClientDocument(ctx, id); err != nil {
			// Without a document there is no redirect URI to trust: the
			// error is shown here, not sent anywhere.
			s.log.Info("oauth request refused", "endpoint", "oauth.authorize", "client", id, "error", "invalid_client", "hint", err.Error())
			_ = s.record(ctx, consent.AuditRecord{Tool: "oauth.authorize", KeyID: id, AgentName: "oauth-client", Decision: consent.Deny, ResultCode: "invalid_client"})
			nonce := randomHex(16)
			pageHeaders(w, nonce)
			http.Error(w, "The client's metadata document could not be used: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = checkPKCE(ar)
	}
	if err != nil {
		s.refused(ctx, r, "oauth.authorize", r.Form.Get("client_id"), err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	cookie := randomHex(32)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: cookie, Path: AuthorizePath, HttpOnly: true,
		Secure: strings.HasPrefix(s.base(r), "https://"), SameSite: http.SameSiteStrictMode})
	s.render(w, r, ar, s.csrfToken(cookie), "", http.StatusOK)
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, csrf, msg string, status int) {
	nonce := randomHex(16)
	pageHeaders(w, nonce)
	hidden := map[string][]string{}
	for k, v := range r.Form {
		switch k {
		case "csrf", "owner_key", "preset", "decision", "deny_types", "audience":
		default:
			if !strings.HasPrefix(k, "r:") {
				hidden[k] = v
			}
		}
	}
	c, _ := s.opts.Store.OAuthClient(r.Context(), ar.GetClient().GetID())
	name := c.Name
	if name == "" {
		name = "An unnamed client"
	}
	host := ar.GetRedirectURI().String()
	if u := ar.GetRedirectURI(); u != nil && u.Host != "" {
		host = u.Scheme + "://" + u.Host
	}
	scopes := ar.GetRequestedScopes()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = page.Execute(w, pageData{Client: name, ClientID: c.ID, RedirectHost: host, Remote: c.Remote, Scopes: asked(scopes),
		WriteAllowed: writeAllowed(scopes), Presets: presets, Resources: resources, Hidden: hidden, CSRF: csrf, Nonce: nonce, Error: msg})
}

// writeAllowed: a client that names its scopes without cairn:write is not
// offered write.
func writeAllowed(scopes []string) bool {
	return len(scopes) == 0 || slices.Contains(scopes, ScopeWrite)
}

// checkPKCE refuses, before the owner is asked, a request fosite's PKCE
// handler would refuse only once approved: no challenge, or a method
// other than S256.
func checkPKCE(ar fosite.AuthorizeRequester) error {
	f := ar.GetRequestForm()
	if f.Get("code_challenge") == "" {
		return fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge with code_challenge_method S256.")
	}
	if f.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("Only the PKCE method S256 is supported.")
	}
	return nil
}

// authorizeSubmit handles the consent form: the CSRF check, the owner's
// sign-in, then approval (an agent with the chosen rules, and a code back
// to the client) or denial (access_denied back to the client).
func (s *Server) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	r = s.withResource(r)
	ctx := r.Context()
	cookie, err := r.Cookie(csrfCookie)
	if err != nil || !hmac.Equal([]byte(s.csrfToken(cookie.Value)), []byte(r.PostForm.Get("csrf"))) {
		s.log.Info("oauth consent refused: CSRF check failed", "remote", r.RemoteAddr)
		_ = s.record(ctx, consent.AuditRecord{Tool: "oauth.authorize", AgentName: "oauth-client", Decision: consent.Deny, ResultCode: "csrf"})
		nonce := randomHex(16)
		pageHeaders(w, nonce)
		http.Error(w, "The consent form expired or did not come from this server; start the connection again from your client.", http.StatusForbidden)
		return
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err != nil {
		s.refused(ctx, r, "oauth.authorize", r.Form.Get("client_id"), err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	clientID := ar.GetClient().GetID()
	if r.PostForm.Get("decision") != "approve" {
		s.auditClient(ctx, clientID, "oauth.authorize", consent.Deny, "access_denied")
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The owner denied the request."))
		return
	}
	owner, err := s.opts.SignIn(ctx, r.PostForm.Get("owner_key"))
	if err != nil || !owner.Owner {
		s.auditClient(ctx, clientID, "oauth.authorize", consent.Deny, "owner_sign_in")
		s.render(w, r, ar, r.PostForm.Get("csrf"), "That is not the owner's API key.", http.StatusUnauthorized)
		return
	}
	rules, msg := chosenRules(r.PostForm, writeAllowed(ar.GetRequestedScopes()))
	if msg != "" {
		s.render(w, r, ar, r.PostForm.Get("csrf"), msg, http.StatusBadRequest)
		return
	}
	c, _ := s.opts.Store.OAuthClient(ctx, clientID)
	agent, err := s.opts.Store.ConnectOAuthClient(ctx, clientID, owner.UserID, agentName(c.Name), rules)
	if err != nil {
		s.log.Error("oauth: connect client", "err", err)
		s.render(w, r, ar, r.PostForm.Get("csrf"), "The approval could not be saved; try again.", http.StatusInternalServerError)
		return
	}
	for _, sc := range ar.GetRequestedScopes() {
		ar.GrantScope(sc)
	}
	for _, a := range ar.GetRequestedAudience() {
		ar.GrantAudience(a)
	}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, newSession(owner.UserID, agent.ID, agent.ID))
	if err != nil {
		s.refused(ctx, r, "oauth.authorize", clientID, err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	s.grantAudit(ctx, owner, agent, clientID, rules)
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// grantAudit records the approval and each rule it set.
func (s *Server) grantAudit(ctx context.Context, owner consent.Principal, agent consent.Agent, clientID string, rules []consent.Rule) {
	recs := []consent.AuditRecord{{Tool: "oauth.authorize", Resource: "oauth/" + clientID, Decision: consent.Allow, ResultCode: "OK"}}
	for _, ru := range rules {
		recs = append(recs, consent.AuditRecord{Tool: "oauth.authorize", Resource: ru.Pattern, Action: ru.Action, Decision: ru.Effect, ResultCode: "OK"})
	}
	for i := range recs {
		recs[i].UserID, recs[i].AgentID, recs[i].AgentName, recs[i].KeyID = owner.UserID, agent.ID, agent.Name, clientID
		recs[i].Transport, recs[i].Kind, recs[i].At = transport, consent.AuditCall, s.opts.Store.Now()
	}
	if err := s.opts.Audit.Record(ctx, recs...); err != nil {
		s.log.Error("oauth: audit", "err", err)
	}
}

// agentName names the agent of a client after it: "oauth-<name>".
func agentName(client string) string {
	var b strings.Builder
	b.WriteString("oauth-")
	for _, r := range strings.ToLower(client) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == len("oauth-") {
		b.WriteString("client")
	}
	return b.String()
}

// chosenRules turns the form's choice into consent rules, or a message
// for the owner.
func chosenRules(form url.Values, write bool) ([]consent.Rule, string) {
	id := form.Get("preset")
	var rules []consent.Rule
	for _, p := range presets {
		if p.ID != id {
			continue
		}
		if p.Write && !write {
			return nil, "This client did not ask for write access."
		}
		rules = append(rules, p.Rules...)
		if id == "custom" {
			for _, res := range resources {
				switch form.Get("r:" + res.Pattern) {
				case "read":
					rules = append(rules, consent.Rule{Pattern: res.Pattern, Action: consent.Read, Effect: consent.Allow})
				case "write":
					if !write {
						return nil, "This client did not ask for write access."
					}
					rules = append(rules, consent.Rule{Pattern: res.Pattern, Action: consent.Read, Effect: consent.Allow},
						consent.Rule{Pattern: res.Pattern, Action: consent.Write, Effect: consent.Allow})
				}
			}
		}
		for _, t := range strings.Split(form.Get("deny_types"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				pat := "entities/" + t
				if _, err := consent.NormalizePattern(pat); err != nil {
					return nil, "Entity type " + t + " is not a valid name."
				}
				rules = append(rules, consent.Rule{Pattern: pat, Action: consent.Read, Effect: consent.Deny},
					consent.Rule{Pattern: pat, Action: consent.Write, Effect: consent.Deny})
			}
		}
		if len(rules) == 0 {
			return nil, "Choose at least one thing the client may do, or deny."
		}
		return rules, ""
	}
	return nil, "Choose what the client may do."
}
