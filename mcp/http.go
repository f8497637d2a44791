package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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
	// OAuth, when set, is the authorization server: its endpoints are
	// served, /mcp and the REST facade also take its access tokens, and
	// the protected resource metadata lists it.
	OAuth OAuthServer
	// Ready reports whether the service can take traffic (/readyz); nil
	// means always.
	Ready func(context.Context) error
	// ReadyDetails are added to the JSON body of /readyz, e.g. which
	// embedder serves memories and why.
	ReadyDetails map[string]string
	// MaxRequestBytes bounds request bodies; 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// SessionTimeout closes MCP sessions idle this long; 0 means 30 minutes.
	SessionTimeout time.Duration
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed
	// to call, besides loopback ones; "*" allows any. Requests without an
	// Origin header (every non-browser client) are not affected. Allowed
	// origins also get CORS answers.
	AllowedOrigins []string
	// ReadTimeout bounds how long a request body may take to arrive, from
	// the end of its headers; 0 means DefaultReadTimeout, negative none.
	// It does not limit answers, so SSE streams may last.
	ReadTimeout time.Duration
	// Console, when set, is served under /console/ and / redirects there.
	Console *ConsoleRoutes
	// StreamReplayBytes bounds what the server keeps of its SSE streams'
	// events so that a client whose stream dropped can resume it
	// (Last-Event-ID): 0 means DefaultStreamReplayBytes, negative none
	// (streams then carry no event ids and cannot be resumed).
	StreamReplayBytes int
	// Stopping, when set, is closed as the HTTP server begins to shut
	// down: the standing GET streams of MCP sessions end then (a client
	// reconnects elsewhere), since a graceful shutdown would otherwise
	// wait its whole timeout for streams that never end. Requests in
	// flight, tool calls included, are left to finish.
	Stopping <-chan struct{}
}

// ConsoleRoutes are the web console's handlers (package console). Assets
// are served without a key (the pages hold no data); API, under
// /console/api/, behind the same authentication as /mcp, with the
// principal available to it through PrincipalFrom.
type ConsoleRoutes struct {
	Assets http.Handler
	API    http.Handler
}

// DefaultStreamReplayBytes is how much of its SSE streams' events the
// server keeps for resumption unless HTTPOptions.StreamReplayBytes says
// otherwise: the events of every open session together, the oldest
// streams' dropped first.
const DefaultStreamReplayBytes = 8 << 20

// replayStore is the SDK's in-memory event store, bounded to n bytes (see
// HTTPOptions.StreamReplayBytes), or nil for none. With it every SSE event
// carries an id, and a GET with Last-Event-ID on the same session (the
// same key: the SDK binds sessions to it) replays what followed that
// event. It lives in the process: a restarted server has neither the
// sessions nor their events, and a client starts a new session.
func replayStore(n int) mcpsdk.EventStore {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = DefaultStreamReplayBytes
	}
	st := mcpsdk.NewMemoryEventStore(nil)
	st.SetMaxBytes(n)
	return st
}

// PrincipalFrom returns the principal a request was authenticated as.
func PrincipalFrom(ctx context.Context) (consent.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(consent.Principal)
	return p, ok
}

type principalKey struct{}

// HTTPHandler returns Cairn's HTTP surface:
//
//	/mcp      MCP Streamable HTTP (API key required)
//	/mcp/tools, /mcp/call/{tool}  the REST facade (API key required)
//	/metrics  Prometheus metrics, with the owner's key (when Deps.Metrics is set)
//	/console/ the web console, and / redirecting to it (when opts.Console is set)
//	/healthz  liveness: the process answers
//	/readyz   readiness: the stores answer
//	/.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata of /mcp
//	/.well-known/oauth-authorization-server, /oauth/…, /console/oauth/authorize
//	          the authorization server (when opts.OAuth is set)
//
// Every route checks Host and Origin and answers CORS first (guardHTTP).
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.MaxRequestBytes == 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	mcpServer := s.mcpServer(principalFromToken, TransportHTTP)
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return mcpServer },
		&mcpsdk.StreamableHTTPOptions{
			Logger: s.log, SessionTimeout: opts.SessionTimeout, MaxRequestBodyBytes: opts.MaxRequestBytes,
			EventStore: replayStore(opts.StreamReplayBytes),
		})
	// The SDK binds a session to TokenInfo.UserID and hands TokenInfo to
	// tool calls. authenticate has already checked the key; this only
	// attaches the principal it found, and the request's rate recorder, in
	// which each tool call's verdict lands for the response headers.
	attach := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := ctx.Value(principalKey{}).(consent.Principal)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		extra := map[string]any{"principal": p}
		if rec := rateRecorderFrom(ctx); rec != nil {
			extra["rate"] = rec
		}
		return &auth.TokenInfo{UserID: p.KeyID, Extra: extra}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})

	mux := http.NewServeMux()
	mux.Handle("/mcp", s.limitBody(opts.MaxRequestBytes, mcpShape,
		s.authenticate(opts.credentials(), mcpShape, s.rateLimitMCP(opts.MaxRequestBytes, attach(endStreamsOnStop(opts.Stopping, streamable))))))
	mux.Handle("/mcp/", s.limitBody(opts.MaxRequestBytes, restShape,
		s.authenticate(opts.credentials(), restShape, s.restHandler(opts.MaxRequestBytes))))
	s.fileRoutes(mux, opts)
	if s.deps.Metrics != nil {
		mux.Handle("GET /metrics", s.authenticate(opts.credentials(), mcpShape, ownerOnly(s.deps.Metrics.Handler())))
	}
	if c := opts.Console; c != nil {
		mux.Handle("GET /{$}", http.RedirectHandler("/console/", http.StatusFound))
		mux.Handle("/console/", c.Assets)
		mux.Handle("/console/api/", s.limitBody(opts.MaxRequestBytes, mcpShape, s.authenticate(opts.credentials(), mcpShape, c.API)))
	}
	creds := opts.credentials()
	mux.HandleFunc("GET "+protectedResourcePath, creds.serveProtectedResource)
	mux.HandleFunc("GET "+protectedResourcePath+"/mcp", creds.serveProtectedResource)
	if opts.OAuth != nil {
		h := opts.OAuth.Handler()
		for _, p := range opts.OAuth.Paths() {
			mux.Handle(p, s.limitBody(opts.MaxRequestBytes, mcpShape, h))
		}
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if opts.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := opts.Ready(ctx); err != nil {
				s.log.Warn("not ready", "err", err)
				writeJSON(w, http.StatusServiceUnavailable, readyBody("unavailable", opts.ReadyDetails))
				return
			}
		}
		writeJSON(w, http.StatusOK, readyBody("ready", opts.ReadyDetails))
	})
	return s.guardHTTP(opts, s.withTraceContext(mux))
}

// authenticate answers 401 with the error envelope unless the request
// carries a valid key (or an access token of the authorization server), and otherwise passes it on with the principal in its
// context and the key in the Authorization header (X-API-Key is normalised
// to Bearer for the SDK).
func (s *Server) authenticate(c credentials, shape errorShape, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := consent.KeyFromHeaders(r.Header)
		var p consent.Principal
		oauthToken := err == nil && c.oauth != nil && c.oauth.Owns(key)
		switch {
		case oauthToken:
			p, err = c.oauth.Verify(r, key)
		case err == nil:
			p, err = c.keys.Authenticate(r.Context(), key)
		}
		if err != nil {
			e := toError(err)
			if oauthToken {
				e = newError(http.StatusUnauthorized, CodeUnauthorized, err.Error(), nil)
			}
			if e.Status == http.StatusUnauthorized {
				challenge := `Bearer realm="cairn", resource_metadata="` + c.resourceMetadataURL(r) + `"`
				if oauthToken {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				// No user is known, so this goes to the server log, not
				// to a user's audit log.
				s.log.Info("authentication refused", "reason", err.Error(), "remote", r.RemoteAddr, "path", r.URL.Path)
			} else {
				s.log.Error("authentication failed", "err", err)
			}
			sendError(w, e, shape)
			return
		}
		// X-Agent-ID is optional, but when sent it must name the key's own
		// agent: a key never acts as another agent.
		if claimed := r.Header.Get("X-Agent-ID"); claimed != "" && claimed != p.AgentName && claimed != p.AgentID {
			e := newError(http.StatusForbidden, CodeForbidden,
				fmt.Sprintf("X-Agent-ID names agent %q, but this key belongs to agent %q", truncateText(claimed, 64), p.AgentName), nil)
			sendError(w, e, shape)
			return
		}
		r = r.Clone(context.WithValue(r.Context(), principalKey{}, p))
		r.Header.Set("Authorization", "Bearer "+key)
		next.ServeHTTP(w, r)
	})
}

// limitBody refuses, with the envelope, a request whose declared length is
// over the limit; bodies without a declared length are cut by the SDK.
func (s *Server) limitBody(limit int64, shape errorShape, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			e := newError(http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "request body is larger than the server accepts",
				map[string]any{"max_bytes": limit, "content_length": r.ContentLength})
			sendError(w, e, shape)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin answers 403 to a browser request from an origin that is
// neither loopback nor allowed, which is what stops a web page from
// driving a local server (DNS rebinding).
func (s *Server) checkOrigin(allowed []string, shape errorShape, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, allowed) {
			e := newError(http.StatusForbidden, CodeForbidden, "origin "+truncateText(origin, 128)+" is not allowed; start the server with --allowed-origins to allow it", nil)
			sendError(w, e, shape)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed reports whether an Origin header names a loopback origin or
// one of allowed ("*" allows all).
func originAllowed(origin string, allowed []string) bool {
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// principalFromToken is the PrincipalFunc of the HTTP transport.
func principalFromToken(_ context.Context, extra *mcpsdk.RequestExtra) (consent.Principal, error) {
	if extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra["principal"].(consent.Principal); ok {
			return p, nil
		}
	}
	return consent.Principal{}, consent.ErrMissingKey
}

// FixedPrincipal is the PrincipalFunc of transports that run as one
// principal, such as stdio.
func FixedPrincipal(p consent.Principal) PrincipalFunc {
	return func(context.Context, *mcpsdk.RequestExtra) (consent.Principal, error) { return p, nil }
}

// errorShape chooses how an error is written: MCP's envelope {error}, or
// the REST facade's {success: false, error}.
type errorShape int

const (
	mcpShape errorShape = iota
	restShape
)

// WriteError writes the error envelope every Cairn HTTP answer uses,
// {error: {code, message, details, trace_id}}, with a fresh trace id, and
// returns that id for the caller's log. For HTTP handlers mounted beside
// the MCP endpoint (the web console's API).
func WriteError(w http.ResponseWriter, status int, code, message string, details map[string]any) (traceID string) {
	e := newError(status, code, message, details)
	sendError(w, e, mcpShape)
	return e.Body.TraceID
}

// WriteJSON writes v as a JSON answer with status, as every Cairn HTTP
// answer is written.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// sendError writes an error with a fresh trace id, in the given shape.
func sendError(w http.ResponseWriter, e *Error, shape errorShape) {
	if e.Body.TraceID == "" {
		e.Body.TraceID = newTraceID()
	}
	if shape == restShape {
		writeJSON(w, e.Status, restFailure{Success: false, Error: e.Body})
		return
	}
	writeJSON(w, e.Status, e.Envelope())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readyBody is the JSON of /readyz: its status and the details.
func readyBody(status string, details map[string]string) map[string]string {
	body := map[string]string{"status": status}
	for k, v := range details {
		if k != "status" {
			body[k] = v
		}
	}
	return body
}

// endStreamsOnStop ends the GET requests of next (an MCP session's
// standing SSE stream) when stopping is closed; other requests are served
// as they are.
func endStreamsOnStop(stopping <-chan struct{}, next http.Handler) http.Handler {
	if stopping == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
