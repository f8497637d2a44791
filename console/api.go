package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/mcp"
)

// Store is what the owner API needs from the control plane; cairn admin
// uses the same methods, so the console and the command line manage agents
// and keys alike.
type Store interface {
	ListAgents(ctx context.Context, userID string) ([]consent.Agent, error)
	CreateAgent(ctx context.Context, userID, name string) (consent.Agent, error)
	AgentByName(ctx context.Context, userID, name string) (consent.Agent, error)
	CreateKey(ctx context.Context, userID, agentID string, expiresAt time.Time) (string, consent.Key, error)
	ListKeys(ctx context.Context, f controlplane.KeyFilter) ([]consent.Key, error)
	RevokeKey(ctx context.Context, keyID string) error
	ListRules(ctx context.Context, userID, agentID string) ([]consent.Rule, error)
}

// APIOptions configure the console's API.
type APIOptions struct {
	// Store manages agents and keys. Required.
	Store Store
	// Principal returns the principal the request was authenticated as;
	// the HTTP layer authenticates before the API runs. Required.
	Principal func(ctx context.Context) (consent.Principal, bool)
	// Audit records what the owner changes; nil records nothing.
	Audit *consent.AuditLog
	// Logger receives internal errors, with their trace id; nil discards.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// OAuth lists and disconnects the clients the owner approved on the
	// OAuth consent page; nil when serve runs without the authorization
	// server (the endpoints then answer an empty list and 404).
	OAuth OAuthClients
}

// OAuthClients is what the owner's view of connected OAuth clients needs
// (package oauth, over the control plane).
type OAuthClients interface {
	ListOAuthClients(ctx context.Context, userID string) ([]controlplane.OAuthClient, error)
	// Disconnect revokes every token of a client at once and removes its
	// agent's rules, and audits it.
	Disconnect(ctx context.Context, p consent.Principal, clientID string) error
}

// API returns the handler of /console/api/:
//
//	GET  /console/api/session              who the key is (any key)
//	GET  /console/api/agents               the owner's agents and their keys (owner)
//	POST /console/api/agents               {name}: add an agent (owner)
//	POST /console/api/keys                 {agent, expires_in_days}: issue a key, shown once (owner)
//	POST /console/api/keys/{id}/revoke     revoke a key (owner)
//	GET  /console/api/oauth/clients        the OAuth clients the owner approved, their last
//	                                       use and their agent's rules (owner)
//	POST /console/api/oauth/clients/{id}/disconnect  revoke a client's tokens at once (owner)
//	POST /console/api/consent/preview      {agent, resource, action, effect, resources}: what
//	                                       each resource's decision is now and would be with
//	                                       that rule (owner)
//
// Consent rules themselves, the audit log and the data are read and written
// through the tools (POST /mcp/call/{tool}), not here. Errors are the
// envelope {error: {code, message, trace_id}}.
func API(opts APIOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &api{APIOptions: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/api/session", a.session)
	mux.HandleFunc("GET /console/api/agents", a.owner(a.listAgents))
	mux.HandleFunc("POST /console/api/agents", a.owner(a.createAgent))
	mux.HandleFunc("POST /console/api/keys", a.owner(a.createKey))
	mux.HandleFunc("POST /console/api/keys/{id}/revoke", a.owner(a.revokeKey))
	mux.HandleFunc("POST /console/api/consent/preview", a.owner(a.preview))
	mux.HandleFunc("GET /console/api/oauth/clients", a.owner(a.listOAuthClients))
	mux.HandleFunc("POST /console/api/oauth/clients/{id}/disconnect", a.owner(a.disconnectOAuthClient))
	mux.HandleFunc("/console/api/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, r, http.StatusNotFound, mcp.CodeNotFound, "no such console endpoint: "+r.Method+" "+r.URL.Path, nil)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

type api struct {
	APIOptions
}

// Session is the answer of GET /console/api/session.
type Session struct {
	User    string `json:"user"`
	Agent   string `json:"agent"`
	AgentID string `json:"agent_id"`
	KeyID   string `json:"key_id"`
	Owner   bool   `json:"owner"`
	// Built is false when the binary carries no front end.
	Built bool `json:"built"`
}

func (a *api) session(w http.ResponseWriter, r *http.Request) {
	p, ok := a.Principal(r.Context())
	if !ok {
		a.fail(w, r, http.StatusUnauthorized, mcp.CodeUnauthorized, "a key is needed", nil)
		return
	}
	mcp.WriteJSON(w, http.StatusOK, Session{User: p.UserName, Agent: p.AgentName, AgentID: p.AgentID, KeyID: p.KeyID, Owner: p.Owner, Built: Built()})
}

// owner lets only the owner's agent through: every other key, whatever its
// consent rules, gets FORBIDDEN.
func (a *api) owner(next func(http.ResponseWriter, *http.Request, consent.Principal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, ok := a.Principal(r.Context())
		if !ok {
			a.fail(w, r, http.StatusUnauthorized, mcp.CodeUnauthorized, "a key is needed", nil)
			return
		}
		if !p.Owner {
			a.fail(w, r, http.StatusForbidden, mcp.CodeForbidden, fmt.Sprintf("this view is for the owner's key only; agent %q cannot manage agents, keys or consent", p.AgentName), nil)
			return
		}
		next(w, r, p)
	}
}

// KeyOut is an API key as the console lists it; the key itself is never
// stored, only its first characters.
type KeyOut struct {
	ID         string `json:"id"`
	Agent      string `json:"agent"`
	Prefix     string `json:"prefix"`
	Status     string `json:"status"` // active, revoked or expired
	CreatedAt  string `json:"created_at"`
	ExpiresAt  string `json:"expires_at,omitempty"`
	RevokedAt  string `json:"revoked_at,omitempty"`
	LastUsedAt string `json:"last_used_at,omitempty"`
	// Current is true for the key the request was made with.
	Current bool `json:"current,omitempty"`
}

// AgentOut is an agent with its keys.
type AgentOut struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Owner bool     `json:"owner"`
	Keys  []KeyOut `json:"keys"`
}

func (a *api) keyOut(k consent.Key, current string) KeyOut {
	out := KeyOut{ID: k.ID, Agent: k.AgentName, Prefix: k.Prefix, Status: "active", CreatedAt: stamp(k.CreatedAt),
		ExpiresAt: stamp(k.ExpiresAt), RevokedAt: stamp(k.RevokedAt), LastUsedAt: stamp(k.LastUsedAt), Current: k.ID == current}
	switch {
	case !k.RevokedAt.IsZero():
		out.Status = "revoked"
	case !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(a.Now()):
		out.Status = "expired"
	}
	return out
}

func (a *api) listAgents(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	agents, err := a.Store.ListAgents(r.Context(), p.UserID)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	keys, err := a.Store.ListKeys(r.Context(), controlplane.KeyFilter{UserID: p.UserID})
	if err != nil {
		a.internal(w, r, err)
		return
	}
	out := make([]AgentOut, 0, len(agents))
	for _, ag := range agents {
		item := AgentOut{ID: ag.ID, Name: ag.Name, Owner: ag.ID == p.AgentID, Keys: []KeyOut{}}
		for _, k := range keys {
			if k.AgentID == ag.ID {
				item.Keys = append(item.Keys, a.keyOut(k, p.KeyID))
			}
		}
		out = append(out, item)
	}
	mcp.WriteJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func (a *api) createAgent(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	var in struct {
		Name string `json:"name"`
	}
	if !a.decode(w, r, &in) {
		return
	}
	ag, err := a.Store.CreateAgent(r.Context(), p.UserID, in.Name)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	a.audit(r, p, "console.create_agent", "OK")
	mcp.WriteJSON(w, http.StatusCreated, map[string]any{"agent": AgentOut{ID: ag.ID, Name: ag.Name, Keys: []KeyOut{}}})
}

// maxKeyDays bounds a key's lifetime in the console, as a typing guard.
const maxKeyDays = 3650

func (a *api) createKey(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	var in struct {
		Agent         string `json:"agent"`
		ExpiresInDays int    `json:"expires_in_days"`
	}
	if !a.decode(w, r, &in) {
		return
	}
	if in.ExpiresInDays < 0 || in.ExpiresInDays > maxKeyDays {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, fmt.Sprintf("expires_in_days must be 0 (never) to %d", maxKeyDays), nil)
		return
	}
	ag, err := a.Store.AgentByName(r.Context(), p.UserID, in.Agent)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	var expires time.Time
	if in.ExpiresInDays > 0 {
		expires = a.Now().Add(time.Duration(in.ExpiresInDays) * 24 * time.Hour)
	}
	key, k, err := a.Store.CreateKey(r.Context(), p.UserID, ag.ID, expires)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	k.AgentName = ag.Name
	a.audit(r, p, "console.create_key", "OK")
	mcp.WriteJSON(w, http.StatusCreated, map[string]any{"key": key, "record": a.keyOut(k, p.KeyID)})
}

func (a *api) revokeKey(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	id := r.PathValue("id")
	// RevokeKey takes any key id: check that this one is the user's.
	keys, err := a.Store.ListKeys(r.Context(), controlplane.KeyFilter{UserID: p.UserID})
	if err != nil {
		a.internal(w, r, err)
		return
	}
	i := slices.IndexFunc(keys, func(k consent.Key) bool { return k.ID == id })
	if i < 0 {
		a.fail(w, r, http.StatusNotFound, mcp.CodeNotFound, "no key "+truncate(id, 64), nil)
		return
	}
	if id == p.KeyID {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, "this is the key you are signed in with; revoke it with cairn admin key revoke, or sign in with another owner key", nil)
		return
	}
	if err := a.Store.RevokeKey(r.Context(), id); err != nil {
		a.storeError(w, r, err)
		return
	}
	a.audit(r, p, "console.revoke_key", "OK")
	k := keys[i]
	if k.RevokedAt.IsZero() {
		k.RevokedAt = a.Now()
	}
	mcp.WriteJSON(w, http.StatusOK, map[string]any{"record": a.keyOut(k, p.KeyID)})
}

// PreviewIn asks what a rule would change.
type PreviewIn struct {
	Agent    string `json:"agent"`
	Resource string `json:"resource"`
	Action   string `json:"action"`
	Effect   string `json:"effect"`
	// Resources are those to decide, such as entities/<type> for each type
	// the user has and memories/<collection>; the rule's own resource and
	// the fixed ones (profile, graph, sources, schema) are always added.
	Resources []string `json:"resources"`
}

// PreviewDecision is one resource's decision now and with the rule.
type PreviewDecision struct {
	Resource string `json:"resource"`
	Now      string `json:"now"`
	Then     string `json:"then"`
}

// maxPreviewResources bounds a preview's list.
const maxPreviewResources = 500

func (a *api) preview(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	var in PreviewIn
	if !a.decode(w, r, &in) {
		return
	}
	pattern, err := consent.NormalizePattern(in.Resource)
	if err != nil {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, err.Error(), nil)
		return
	}
	action, err := consent.ParseAction(in.Action)
	if err != nil {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, err.Error(), nil)
		return
	}
	effect, err := consent.ParseEffect(in.Effect)
	if err != nil {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, err.Error(), nil)
		return
	}
	if len(in.Resources) > maxPreviewResources {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, fmt.Sprintf("at most %d resources", maxPreviewResources), nil)
		return
	}
	ag, err := a.Store.AgentByName(r.Context(), p.UserID, in.Agent)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	rules, err := a.Store.ListRules(r.Context(), p.UserID, ag.ID)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	// The rule replaces the agent's rule for the same pattern and action,
	// as set_consent_rule stores it.
	then := slices.DeleteFunc(slices.Clone(rules), func(x consent.Rule) bool { return x.Pattern == pattern && x.Action == action })
	then = append(then, consent.Rule{UserID: p.UserID, AgentID: ag.ID, Pattern: pattern, Action: action, Effect: effect})
	resources := append([]string{consent.ResourceProfile, consent.ResourceGraph, consent.ResourceSources, consent.ResourceSchema}, in.Resources...)
	if pattern != "*" {
		resources = append(resources, pattern)
	}
	owner := ag.ID == p.AgentID
	var out []PreviewDecision
	seen := map[string]bool{}
	for _, res := range resources {
		res = consent.NormalizeResource(res)
		if res == "" || seen[res] {
			continue
		}
		seen[res] = true
		d := PreviewDecision{Resource: res, Now: "allow", Then: "allow"}
		if !owner {
			d.Now, d.Then = string(consent.Decide(rules, action, res)), string(consent.Decide(then, action, res))
		}
		out = append(out, d)
	}
	mcp.WriteJSON(w, http.StatusOK, map[string]any{"agent": ag.Name, "owner_agent": owner, "resource": pattern, "action": action, "effect": effect, "decisions": out})
}

// audit records an owner's change in the audit log, as a call of the
// console's own "tool".
func (a *api) audit(r *http.Request, p consent.Principal, what, code string) {
	if a.Audit == nil {
		return
	}
	rec := consent.AuditRecord{At: a.Now(), UserID: p.UserID, AgentID: p.AgentID, AgentName: p.AgentName, KeyID: p.KeyID,
		Transport: "console", Tool: what, Kind: consent.AuditCall, Decision: consent.Allow, ResultCode: code}
	// The change is made; a failed audit write is logged, not answered.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := a.Audit.Record(ctx, rec); err != nil {
		a.Logger.Error("console: audit", "tool", what, "err", err)
	}
}

// maxBody bounds the console API's request bodies.
const maxBody = 64 << 10

func (a *api) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, "the body must be one JSON object of the documented fields: "+err.Error(), nil)
		return false
	}
	return true
}

func (a *api) storeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		a.fail(w, r, http.StatusNotFound, mcp.CodeNotFound, err.Error(), nil)
	case errors.Is(err, controlplane.ErrExists):
		a.fail(w, r, http.StatusConflict, "ALREADY_EXISTS", err.Error(), nil)
	case isValidation(err):
		a.fail(w, r, http.StatusBadRequest, mcp.CodeValidation, err.Error(), nil)
	default:
		a.internal(w, r, err)
	}
}

// isValidation reports whether the control plane refused the input itself
// (a bad name, an expiry in the past) rather than failing: those errors
// wrap no sentinel and no database error.
func isValidation(err error) bool {
	return errors.Unwrap(err) == nil
}

func (a *api) internal(w http.ResponseWriter, r *http.Request, err error) {
	trace := mcp.WriteError(w, http.StatusInternalServerError, mcp.CodeInternal,
		"the console's request failed inside the server; its log has the details under this trace id", nil)
	a.Logger.Error("console: internal error", "path", r.URL.Path, "trace_id", trace, "err", err)
}

func (a *api) fail(w http.ResponseWriter, r *http.Request, status int, code, message string, details map[string]any) {
	trace := mcp.WriteError(w, status, code, message, details)
	a.Logger.Info("console: refused", "path", r.URL.Path, "code", code, "trace_id", trace)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
