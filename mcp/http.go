package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
)

// DefaultMaxRequestBytes bounds an HTTP request body; it matches the stdio
// transport's frame limit, so a call that works on one works on the other.
const DefaultMaxRequestBytes = 16 << 20

// HTTPOptions configure the HTTP handler.
type HTTPOptions struct {
	// Auth turns API keys into principals. Required.
	Auth *consent.Authenticator
	// Ready reports whether the service can take traffic (/readyz); nil
	// means always.
	Ready func(context.Context) error
	// MaxRequestBytes bounds request bodies; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// SessionTimeout closes MCP sessions idle this long; 0 means 30 minutes.
	SessionTimeout time.Duration
}

type principalKey struct{}

// HTTPHandler returns Cairn's HTTP surface:
//
//	/mcp      MCP Streamable HTTP (API key required)
//	/healthz  liveness: the process answers
//	/readyz   readiness: the stores answer
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.MaxRequestBytes == 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	mcpServer := s.MCPServer(principalFromToken)
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return mcpServer },
		&mcpsdk.StreamableHTTPOptions{
			Logger: s.log, SessionTimeout: opts.SessionTimeout, MaxRequestBodyBytes: opts.MaxRequestBytes,
		})
	// The SDK binds a session to TokenInfo.UserID and hands TokenInfo to
	// tool calls. authenticate has already checked the key; this only
	// attaches the principal it found.
	attach := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := ctx.Value(principalKey{}).(consent.Principal)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.KeyID, Extra: map[string]any{"principal": p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})

	mux := http.NewServeMux()
	mux.Handle("/mcp", s.limitBody(opts.MaxRequestBytes, s.authenticate(opts.Auth, attach(streamable))))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if opts.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := opts.Ready(ctx); err != nil {
				s.log.Warn("not ready", "err", err)
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	return mux
}

// authenticate answers 401 with the error envelope unless the request
// carries a valid key, and otherwise passes it on with the principal in its
// context and the key in the Authorization header (X-API-Key is normalised
// to Bearer for the SDK).
func (s *Server) authenticate(a *consent.Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := consent.KeyFromHeaders(r.Header)
		var p consent.Principal
		if err == nil {
			p, err = a.Authenticate(r.Context(), key)
		}
		if err != nil {
			e := toError(err)
			if e.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			} else {
				s.log.Error("authentication failed", "err", err)
			}
			e.Body.TraceID = newTraceID()
			writeJSON(w, e.Status, e.Envelope())
			return
		}
		r = r.Clone(context.WithValue(r.Context(), principalKey{}, p))
		r.Header.Set("Authorization", "Bearer "+key)
		next.ServeHTTP(w, r)
	})
}

// limitBody refuses, with the envelope, a request whose declared length is
// over the limit; bodies without a declared length are cut by the SDK.
func (s *Server) limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			e := newError(http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "request body is larger than the server accepts",
				map[string]any{"max_bytes": limit, "content_length": r.ContentLength})
			e.Body.TraceID = newTraceID()
			writeJSON(w, e.Status, e.Envelope())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// principalFromToken is the PrincipalFunc of the HTTP transport.
func principalFromToken(_ context.Context, req *mcpsdk.CallToolRequest) (consent.Principal, error) {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if p, ok := req.Extra.TokenInfo.Extra["principal"].(consent.Principal); ok {
			return p, nil
		}
	}
	return consent.Principal{}, consent.ErrMissingKey
}

// FixedPrincipal is the PrincipalFunc of transports that run as one
// principal, such as stdio.
func FixedPrincipal(p consent.Principal) PrincipalFunc {
	return func(context.Context, *mcpsdk.CallToolRequest) (consent.Principal, error) { return p, nil }
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
