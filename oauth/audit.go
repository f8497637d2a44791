package oauth

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ory/fosite"

	"github.com/cairnkg/cairn/consent"
)

// transport names the authorization server's records in the audit log.
const transport = "oauth"

// record writes one audit record, filling its time and transport; a
// record without a user goes under the owner's, whose server this is.
func (s *Server) record(ctx context.Context, rec consent.AuditRecord) error {
	rec.Transport, rec.Kind = transport, consent.AuditCall
	if rec.At.IsZero() {
		rec.At = s.opts.Store.Now()
	}
	if rec.UserID == "" {
		owner, err := s.opts.Store.Owner(ctx)
		if err != nil {
			s.log.Warn("oauth: audit without an owner", "tool", rec.Tool, "err", err)
			return err
		}
		rec.UserID = owner.ID
	}
	if err := s.opts.Audit.Record(ctx, rec); err != nil {
		s.log.Error("oauth: audit", "tool", rec.Tool, "err", err)
		return err
	}
	return nil
}

// auditClient records an event of a client, under the agent its approval
// created when there is one.
func (s *Server) auditClient(ctx context.Context, clientID, tool string, decision consent.Effect, code string) {
	rec := consent.AuditRecord{Tool: tool, KeyID: clientID, Resource: "oauth/" + clientID, Decision: decision, ResultCode: code,
		AgentName: "oauth-client"}
	if c, err := s.opts.Store.OAuthClient(ctx, clientID); err == nil && c.AgentID != "" {
		rec.UserID, rec.AgentID, rec.AgentName = c.UserID, c.AgentID, c.AgentName
	}
	_ = s.record(ctx, rec)
}

// refused records and logs a refused request, with the OAuth error code
// and never the token, code or verifier.
func (s *Server) refused(ctx context.Context, r *http.Request, tool, clientID string, err error) {
	e := fosite.ErrorToRFC6749Error(err)
	code := e.ErrorField
	s.log.Info("oauth request refused", "endpoint", tool, "client", clientID, "error", code, "hint", e.HintField, "debug", e.DebugField, "remote", r.RemoteAddr)
	s.auditClient(ctx, clientID, tool, consent.Deny, code)
}

// granted records an issued grant or token.
func (s *Server) granted(ctx context.Context, ar fosite.Requester, tool string) {
	s.auditClient(ctx, ar.GetClient().GetID(), tool, consent.Allow, "OK")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}
