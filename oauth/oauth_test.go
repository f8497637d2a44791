package oauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/db/sqlite/sqlitetest"
	"github.com/cairnkg/cairn/migrations"
	"github.com/cairnkg/cairn/oauth"
)

// ownerKey is the owner's API key in every test.
const ownerKey = "cairn_sk_testownerkeytestownerkeytestownerkey00"

// backends open a fresh, migrated control plane on each backend; the
// PostgreSQL one skips (or fails under CI) without a server, as pgtest
// decides.
var backends = []struct {
	name string
	open func(t testing.TB) *controlplane.Store
}{
	{"SQLite", func(t testing.TB) *controlplane.Store {
		return controlplane.New(sqlitetest.Open(t).Write, migrations.SQLite)
	}},
	{"Postgres", func(t testing.TB) *controlplane.Store {
		db, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return controlplane.New(db.SQL, migrations.Postgres)
	}},
}

// harness is an authorization server and a protected /mcp over one store.
type harness struct {
	t      *testing.T
	store  *controlplane.Store
	server *oauth.Server
	url    string
	owner  consent.User
	client *http.Client
	logs   *lockedBuffer
}

// lockedBuffer collects the server's log lines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// noSecretsLogged fails if a token or code appears in the server's log.
func (h *harness) noSecretsLogged(secrets ...string) {
	h.t.Helper()
	logs := h.logs.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			h.t.Errorf("the server logged a token or code")
		}
	}
}

func newHarness(t *testing.T, store *controlplane.Store, tune ...func(*oauth.Options)) *harness {
	t.Helper()
	ctx := t.Context()
	b, err := store.EnsureOwner(ctx, "owner", consent.HashKey(ownerKey), consent.DisplayPrefix(ownerKey))
	if err != nil {
		t.Fatal(err)
	}
	audit := consent.NewAuditLog(store, consent.AuditLogOptions{})
	t.Cleanup(func() { _ = audit.Close() })
	auth := consent.NewAuthenticator(store, nil)
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), nil))
	// Limits high enough for every case of a backend from one address;
	// testRateLimits checks them with its own.
	limiter := consent.NewLimiter(store, consent.LimiterOptions{Limits: map[consent.RateClass]int{oauth.RateClassToken: 1000, oauth.RateClassRegister: 1000}})
	opts := oauth.Options{Store: store, Audit: audit, SignIn: auth.Authenticate, Logger: log, Limiter: limiter}
	for _, f := range tune {
		f(&opts)
	}
	srv, err := oauth.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		p, err := srv.Verify(r, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, p.AgentName)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &harness{t: t, store: store, server: srv, url: ts.URL, owner: b.User, client: c, logs: logs}
}

// TestOAuth runs the authorization server's cases on each backend, one
// store per backend (a PostgreSQL schema is costly to migrate), each case
// with clients of its own.
func TestOAuth(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"GrantActsAsConsentedAgent", testGrantActsAsConsentedAgent},
		{"WrongRedirectURI", testWrongRedirectURI},
		{"ReplayedCode", testReplayedCode},
		{"ReusedRefreshTokenRevokesFamily", testReusedRefreshTokenRevokesFamily},
		{"TokenForAnotherResource", testTokenForAnotherResource},
		{"TokenAfterRevocation", testTokenAfterRevocation},
		{"PKCEVerifierMismatch", testPKCEVerifierMismatch},
		{"ConsentFormNeedsCSRFAndOwner", testConsentFormNeedsCSRFAndOwner},
	}
	cases = append(cases, struct {
		name string
		run  func(t *testing.T, h *harness)
	}{"RateLimits", testRateLimits}, struct {
		name string
		run  func(t *testing.T, h *harness)
	}{"ClientMetadataDocument", testClientMetadataDocument})
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b.open(t))
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, h.with(t)) })
			}
		})
	}
}

// with returns the harness for a subtest.
func (h *harness) with(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

const redirect = "http://127.0.0.1:9999/callback"

// register registers a public client and returns its id.
func (h *harness) register() string {
	h.t.Helper()
	body := `{"redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none","client_name":"Test Host"}`
	resp, err := h.client.Post(h.url+oauth.RegisterPath, "application/json", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	var out struct {
		ClientID string `json:"client_id"`
	}
	decode(h.t, resp, http.StatusCreated, &out)
	return out.ClientID
}

// pkce returns a verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 50)[:50]
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func (h *harness) authorizeQuery(clientID, redirectURI, challenge, resource string) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"state-12345"}, "scope": {oauth.ScopeRead}}
	if resource != "" {
		q.Set("resource", resource)
	}
	return q
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// approve opens the consent page, approves with the preset "read
// everything but invoices" and returns the redirect the client gets.
func (h *harness) approve(q url.Values, preset string) *url.URL {
	h.t.Helper()
	resp, err := h.client.Get(h.url + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		h.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		h.t.Errorf("consent page headers: %v", resp.Header)
	}
	// Each scope asked is shown with what it means.
	for _, sc := range strings.Fields(q.Get("scope")) {
		if !regexp.MustCompile(`<li><code>` + regexp.QuoteMeta(sc) + `</code>: \w`).Match(page) {
			h.t.Errorf("the consent page does not say what %s means:\n%s", sc, page)
		}
	}
	m := csrfField.FindSubmatch(page)
	if m == nil {
		h.t.Fatalf("no CSRF field on the consent page")
	}
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("csrf", string(m[1]))
	form.Set("preset", preset)
	form.Set("owner_key", ownerKey)
	form.Set("decision", "approve")
	resp, err = h.client.PostForm(h.url+oauth.AuthorizePath, form)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		h.t.Fatalf("approve: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		h.t.Fatal(err)
	}
	return loc
}

type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	Error   string `json:"error"`
}

func (h *harness) tokenRequest(form url.Values) (int, tokens) {
	h.t.Helper()
	resp, err := h.client.PostForm(h.url+oauth.TokenPath, form)
	if err != nil {
		h.t.Fatal(err)
	}
	var out tokens
	decode(h.t, resp, 0, &out)
	return resp.StatusCode, out
}

func (h *harness) exchange(clientID, code, verifier string) (int, tokens) {
	return h.tokenRequest(url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {h.url + "/mcp"}})
}

func (h *harness) refresh(clientID, rt string) (int, tokens) {
	return h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {rt},
		"resource": {h.url + "/mcp"}})
}

// connect registers a client and runs the whole flow to its first tokens.
func (h *harness) connect() (clientID string, tk tokens) {
	h.t.Helper()
	clientID = h.register()
	verifier, challenge := pkce("v")
	loc := h.approve(h.authorizeQuery(clientID, redirect, challenge, h.url+"/mcp"), "read-but-invoices")
	status, tk := h.exchange(clientID, loc.Query().Get("code"), verifier)
	if status != http.StatusOK || tk.Access == "" || tk.Refresh == "" {
		h.t.Fatalf("exchange: %d %+v", status, tk)
	}
	return clientID, tk
}

// call returns the status of /mcp with a token, and the agent it acted as.
func (h *harness) call(token string) (int, string) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// audited fails unless the audit log holds a refusal of tool with code
// (of a client, when clientID is not empty).
func (h *harness) audited(clientID, tool, code string) {
	h.t.Helper()
	recs, err := h.store.QueryAudit(h.t.Context(), consent.AuditQuery{UserID: h.owner.ID, Tool: tool, Decision: consent.Deny, Limit: 100})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, r := range recs {
		if r.ResultCode == code && (clientID == "" || r.KeyID == clientID) {
			return
		}
	}
	h.t.Errorf("no refusal of %s with %s in the audit log (%d refusals of it)", tool, code, len(recs))
}

func decode(t *testing.T, resp *http.Response, want int, v any) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

func testGrantActsAsConsentedAgent(t *testing.T, h *harness) {
	clientID, tk := h.connect()
	status, agent := h.call(tk.Access)
	if status != http.StatusOK || agent != "oauth-test-host" {
		t.Fatalf("call: %d %q", status, agent)
	}
	c, err := h.store.OAuthClient(t.Context(), clientID)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := h.store.ListRules(t.Context(), h.owner.ID, c.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, r.Pattern+" "+string(r.Action)+" "+string(r.Effect))
	}
	slices.Sort(got)
	if want := "* read allow,entities/invoice read deny"; strings.Join(got, ",") != want {
		t.Errorf("rules %q, want %q", strings.Join(got, ","), want)
	}
	// A refresh gives a working token, and the one it replaced no
	// longer works.
	status, tk2 := h.refresh(clientID, tk.Refresh)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %+v", status, tk2)
	}
	if s, _ := h.call(tk2.Access); s != http.StatusOK {
		t.Errorf("refreshed token: %d", s)
	}
	if s, _ := h.call(tk.Access); s != http.StatusUnauthorized {
		t.Errorf("replaced token: %d", s)
	}
}

func testWrongRedirectURI(t *testing.T, h *harness) {
	clientID := h.register()
	_, challenge := pkce("w")
	resp, err := h.client.Get(h.url + oauth.AuthorizePath + "?" + h.authorizeQuery(clientID, "https://evil.example/callback", challenge, "").Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(string(body), "invalid_request") {
		t.Errorf("wrong redirect: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	h.audited(clientID, "oauth.authorize", "invalid_request")
	// A loopback redirect URI may change its port (RFC 8252).
	resp, err = h.client.Get(h.url + oauth.AuthorizePath + "?" + h.authorizeQuery(clientID, "http://127.0.0.1:51234/callback", challenge, "").Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("loopback port: %d", resp.StatusCode)
	}
}

func testReplayedCode(t *testing.T, h *harness) {
	clientID := h.register()
	verifier, challenge := pkce("r")
	code := h.approve(h.authorizeQuery(clientID, redirect, challenge, ""), "read").Query().Get("code")
	status, tk := h.exchange(clientID, code, verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %+v", status, tk)
	}
	status, again := h.exchange(clientID, code, verifier)
	if status != http.StatusBadRequest || again.Error != "invalid_grant" {
		t.Errorf("replay: %d %+v", status, again)
	}
	h.audited(clientID, "oauth.token", "invalid_grant")
	h.noSecretsLogged(code, tk.Access, tk.Refresh)
	// The replay revokes what the code gave.
	if s, _ := h.call(tk.Access); s != http.StatusUnauthorized {
		t.Errorf("access token after replay: %d", s)
	}
}

func testReusedRefreshTokenRevokesFamily(t *testing.T, h *harness) {
	clientID, tk := h.connect()
	status, tk2 := h.refresh(clientID, tk.Refresh)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %+v", status, tk2)
	}
	status, reused := h.refresh(clientID, tk.Refresh)
	if status != http.StatusBadRequest || reused.Error != "invalid_grant" {
		t.Errorf("reuse: %d %+v", status, reused)
	}
	h.audited(clientID, "oauth.token", "invalid_grant")
	if s, _ := h.call(tk2.Access); s != http.StatusUnauthorized {
		t.Errorf("access token of the family after reuse: %d", s)
	}
	if status, _ := h.refresh(clientID, tk2.Refresh); status != http.StatusBadRequest {
		t.Errorf("newest refresh token after reuse: %d", status)
	}
	if !strings.Contains(h.logs.String(), "oauth request refused") {
		t.Errorf("the refusals were not logged")
	}
	h.noSecretsLogged(tk.Access, tk.Refresh, tk2.Access, tk2.Refresh)

	// Two refreshes with one token at once: at most one succeeds.
	clientID, tk = h.connect()
	statuses := make(chan int, 2)
	for range 2 {
		go func() {
			// Not h.refresh: t.Fatal must not run off the test's goroutine.
			resp, err := h.client.PostForm(h.url+oauth.TokenPath, url.Values{"grant_type": {"refresh_token"},
				"client_id": {clientID}, "refresh_token": {tk.Refresh}})
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	if a, b := <-statuses, <-statuses; a == http.StatusOK && b == http.StatusOK {
		t.Errorf("one refresh token was rotated twice")
	}
}

func testTokenForAnotherResource(t *testing.T, h *harness) {
	clientID := h.register()
	_, challenge := pkce("a")
	resp, err := h.client.Get(h.url + oauth.AuthorizePath + "?" + h.authorizeQuery(clientID, redirect, challenge, "https://other.example/mcp").Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error") != "invalid_target" {
		t.Errorf("another resource: %d %v", resp.StatusCode, loc)
	}
	h.audited(clientID, "oauth.authorize", "invalid_target")

	// A token of this server, shown to the same server under another
	// public URL (another resource), is refused there and audited.
	otherClient, tk := h.connect()
	audit := consent.NewAuditLog(h.store, consent.AuditLogOptions{})
	t.Cleanup(func() { _ = audit.Close() })
	other, err := oauth.New(t.Context(), oauth.Options{Store: h.store, Audit: audit, PublicURL: "https://cairn.example",
		SignIn: consent.NewAuthenticator(h.store, nil).Authenticate})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "https://cairn.example/mcp", nil)
	if _, err := other.Verify(req, tk.Access); err == nil {
		t.Errorf("a token for %s/mcp was accepted by https://cairn.example/mcp", h.url)
	}
	h.audited(otherClient, "oauth.verify", "invalid_target")
}

func testTokenAfterRevocation(t *testing.T, h *harness) {
	clientID, tk := h.connect()
	resp, err := h.client.PostForm(h.url+oauth.RevokePath, url.Values{"client_id": {clientID}, "token": {tk.Access}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if s, _ := h.call(tk.Access); s != http.StatusUnauthorized {
		t.Errorf("access token after revocation: %d", s)
	}
	// Revoking the refresh token ends the grant.
	resp, err = h.client.PostForm(h.url+oauth.RevokePath, url.Values{"client_id": {clientID}, "token": {tk.Refresh}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, out := h.refresh(clientID, tk.Refresh); status != http.StatusBadRequest || out.Error != "invalid_grant" {
		t.Errorf("refresh after revocation: %d %+v", status, out)
	}
	h.audited(clientID, "oauth.token", "invalid_grant")

	// Disconnecting the client from the owner view revokes at once.
	client2, tk2 := h.connect()
	owner, err := h.store.OwnerPrincipal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := h.call(tk2.Access); s != http.StatusOK {
		t.Fatalf("before disconnect: %d", s)
	}
	if err := h.server.Disconnect(t.Context(), owner, client2); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.call(tk2.Access); s != http.StatusUnauthorized {
		t.Errorf("after disconnect: %d", s)
	}
	if status, _ := h.refresh(client2, tk2.Refresh); status != http.StatusBadRequest {
		t.Errorf("refresh after disconnect: %d", status)
	}
}

func testPKCEVerifierMismatch(t *testing.T, h *harness) {
	clientID := h.register()
	_, challenge := pkce("p")
	code := h.approve(h.authorizeQuery(clientID, redirect, challenge, ""), "read").Query().Get("code")
	wrong, _ := pkce("q")
	status, out := h.exchange(clientID, code, wrong)
	if status != http.StatusBadRequest || out.Error != "invalid_grant" {
		t.Errorf("wrong verifier: %d %+v", status, out)
	}
	h.audited(clientID, "oauth.token", "invalid_grant")
	// plain is refused, and so is a request without a challenge.
	for _, q := range []url.Values{
		func() url.Values {
			q := h.authorizeQuery(clientID, redirect, challenge, "")
			q.Set("code_challenge_method", "plain")
			return q
		}(),
		func() url.Values {
			q := h.authorizeQuery(clientID, redirect, "", "")
			q.Del("code_challenge")
			return q
		}(),
	} {
		resp, err := h.client.Get(h.url + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc.Query().Get("error") != "invalid_request" {
			t.Errorf("%s: %d %v", q.Get("code_challenge_method"), resp.StatusCode, loc)
		}
	}
	h.audited(clientID, "oauth.authorize", "invalid_request")
}

func testConsentFormNeedsCSRFAndOwner(t *testing.T, h *harness) {
	clientID := h.register()
	_, challenge := pkce("c")
	form := h.authorizeQuery(clientID, redirect, challenge, "")
	form.Set("preset", "read")
	form.Set("owner_key", ownerKey)
	form.Set("decision", "approve")
	form.Set("csrf", strings.Repeat("0", 64))
	resp, err := h.client.PostForm(h.url+oauth.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged form: %d", resp.StatusCode)
	}
	h.audited("", "oauth.authorize", "csrf")
}

func testRateLimits(t *testing.T, h *harness) {
	// A fixed clock: the window cannot roll over between the requests.
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	limiter := consent.NewLimiter(h.store, consent.LimiterOptions{Now: func() time.Time { return at },
		Limits: map[consent.RateClass]int{oauth.RateClassToken: 2, oauth.RateClassRegister: 2}})
	audit := consent.NewAuditLog(h.store, consent.AuditLogOptions{})
	t.Cleanup(func() { _ = audit.Close() })
	srv, err := oauth.New(t.Context(), oauth.Options{Store: h.store, Audit: audit, Limiter: limiter,
		SignIn: consent.NewAuthenticator(h.store, nil).Authenticate})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	for _, ep := range []struct{ path, body, ctype string }{
		{oauth.RegisterPath, `{"redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"none"}`, "application/json"},
		{oauth.TokenPath, "grant_type=refresh_token&client_id=oac_x&refresh_token=ory_rt_x", "application/x-www-form-urlencoded"},
	} {
		var last *http.Response
		for range 3 {
			resp, err := http.Post(ts.URL+ep.path, ep.ctype, strings.NewReader(ep.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			last = resp
		}
		if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
			t.Errorf("%s, third request over a limit of 2: %d, Retry-After %q", ep.path, last.StatusCode, last.Header.Get("Retry-After"))
		}
	}
}

func testClientMetadataDocument(t *testing.T, h *harness) {
	// Documents served over TLS, as client_ids must be https URLs.
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := "https://" + r.Host + r.URL.Path
		if r.URL.Path == "/liar.json" {
			id = "https://elsewhere.example/client.json"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "client_name": "Document Host", "redirect_uris": []string{redirect}})
	}))
	t.Cleanup(docs.Close)
	d := newHarness(t, h.store, func(o *oauth.Options) { o.ClientDocuments = docs.Client() })
	d.t = t

	clientID := docs.URL + "/client.json"
	verifier, challenge := pkce("d")
	loc := d.approve(d.authorizeQuery(clientID, redirect, challenge, ""), "read")
	status, tk := d.exchange(clientID, loc.Query().Get("code"), verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange for a document client: %d %+v", status, tk)
	}
	if s, agent := d.call(tk.Access); s != http.StatusOK || agent != "oauth-document-host" {
		t.Errorf("document client's token: %d %q", s, agent)
	}

	// A document whose client_id is not its URL is refused, and so is a
	// document at a loopback address when fetched as in production.
	liar := docs.URL + "/liar.json"
	resp, err := d.client.Get(d.url + oauth.AuthorizePath + "?" + d.authorizeQuery(liar, redirect, challenge, "").Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("lying document: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	d.audited(liar, "oauth.authorize", "invalid_client")
	resp, err = h.client.Get(h.url + oauth.AuthorizePath + "?" + h.authorizeQuery(docs.URL+"/other.json", redirect, challenge, "").Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(h.logs.String(), "non-public address") {
		t.Errorf("document on loopback: %d, refused for its address: %v", resp.StatusCode, strings.Contains(h.logs.String(), "non-public address"))
	}
}
