package console

import (
	"errors"
	"net/http"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/mcp"
)

// OAuthClientOut is one connected OAuth client in the owner's view.
type OAuthClientOut struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Agent      string    `json:"agent"`
	Remote     string    `json:"remote,omitempty"`
	CreatedAt  string    `json:"created_at"`
	LastUsedAt string    `json:"last_used_at,omitempty"`
	Rules      []RuleOut `json:"rules"`
}

// RuleOut is a consent rule of a client's agent.
type RuleOut struct {
	Resource string `json:"resource"`
	Action   string `json:"action"`
	Effect   string `json:"effect"`
}

func (a *api) listOAuthClients(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	out := []OAuthClientOut{}
	if a.OAuth == nil {
		mcp.WriteJSON(w, http.StatusOK, map[string]any{"clients": out})
		return
	}
	clients, err := a.OAuth.ListOAuthClients(r.Context(), p.UserID)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	for _, c := range clients {
		rules, err := a.Store.ListRules(r.Context(), p.UserID, c.AgentID)
		if err != nil {
			a.internal(w, r, err)
			return
		}
		item := OAuthClientOut{ID: c.ID, Name: c.Name, Agent: c.AgentName, Remote: c.Remote, CreatedAt: stamp(c.CreatedAt),
			LastUsedAt: stamp(c.LastUsedAt), Rules: []RuleOut{}}
		for _, ru := range rules {
			item.Rules = append(item.Rules, RuleOut{Resource: ru.Pattern, Action: string(ru.Action), Effect: string(ru.Effect)})
		}
		out = append(out, item)
	}
	mcp.WriteJSON(w, http.StatusOK, map[string]any{"clients": out})
}

func (a *api) disconnectOAuthClient(w http.ResponseWriter, r *http.Request, p consent.Principal) {
	id := r.PathValue("id")
	if a.OAuth == nil {
		a.fail(w, r, http.StatusNotFound, mcp.CodeNotFound, "no OAuth client "+truncate(id, 64), nil)
		return
	}
	err := a.OAuth.Disconnect(r.Context(), p, id)
	if errors.Is(err, controlplane.ErrNotFound) {
		a.fail(w, r, http.StatusNotFound, mcp.CodeNotFound, "no OAuth client "+truncate(id, 64), nil)
		return
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	mcp.WriteJSON(w, http.StatusOK, map[string]any{"disconnected": id})
}
