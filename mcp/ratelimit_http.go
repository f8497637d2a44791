package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
)

// Rate limits over Streamable HTTP. One POST may carry one JSON-RPC message
// or, in protocol 2025-03-26 and earlier, a batch of them, so the limit is
// not taken per HTTP request: every tools/call is counted by Handle against
// the class of the tool that actually runs (never against a name read from
// the body by a parser other than the SDK's), and refused on its own with
// the tool error RATE_LIMIT_EXCEEDED. Every other message (initialize,
// tools/list, ping…) counts once against the default class here, before
// the SDK sees it, and is refused with 429. The X-RateLimit-* headers of
// the response report the tightest verdict reached before the response
// started.

// rateLimitMCP counts the messages of an /mcp request that are not tool
// calls, and gives the request a recorder in which Handle reports each tool
// call's verdict for the response headers.
func (s *Server) rateLimitMCP(maxBytes int64, next http.Handler) http.Handler {
	const shape = mcpShape
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.deps.Limiter == nil {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := r.Context().Value(principalKey{}).(consent.Principal)
		others := 1 // GET, DELETE, and bodies the SDK will refuse
		var calls []string
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
			if err != nil {
				e := newError(http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "request body is larger than the server accepts",
					map[string]any{"max_bytes": maxBytes})
				sendError(w, e, shape)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if n, names, ok := bodyMessages(body); ok {
				others, calls = n, names
			}
		}
		rec := &rateRecorder{}
		// The tool calls are counted here too, each in its tool's class,
		// before the response starts: its headers carry the verdicts even
		// when the stream opens before the call runs (the priming event
		// of a resumable stream). Handle takes each call's verdict from
		// the recorder rather than counting it again, and answers a
		// refused one with the tool error RATE_LIMIT_EXCEEDED.
		for _, name := range calls {
			class := consent.RateClassDefault
			if t, ok := s.byName[name]; ok {
				class = t.RateClass
			}
			v, err := s.deps.Limiter.Allow(r.Context(), p.KeyID, class)
			if err != nil {
				s.log.Error("rate limit", "err", err)
				e := newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil)
				sendError(w, e, shape)
				return
			}
			rec.decided(name, v)
		}
		for range others {
			v, err := s.deps.Limiter.Allow(r.Context(), p.KeyID, consent.RateClassDefault)
			if err != nil {
				s.log.Error("rate limit", "err", err)
				e := newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil)
				sendError(w, e, shape)
				return
			}
			rec.observe(v)
			if !v.Allowed {
				s.deps.Metrics.RateLimited(string(consent.RateClassDefault))
				setRateHeaders(w.Header(), v)
				sendError(w, rateLimited(v), shape)
				return
			}
		}
		next.ServeHTTP(&rateHeaderWriter{ResponseWriter: w, rec: rec}, r.WithContext(withRateRecorder(r.Context(), rec)))
	})
}

// bodyMessages counts the messages of a POST body, one message or a
// batch, that are not tools/call requests, and returns the tool names of
// those that are, in order, decoding them exactly as the SDK will. It
// reports false when the SDK will refuse the body.
func bodyMessages(body []byte) (int, []string, bool) {
	var batch []json.RawMessage
	msgs := []json.RawMessage{body}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			return 0, nil, false
		}
		msgs = batch
	}
	n := 0
	var calls []string
	for _, raw := range msgs {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return 0, nil, false
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != "tools/call" {
			n++
			continue
		}
		var params struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &params) // a call the SDK refuses is never run
		calls = append(calls, params.Name)
	}
	return n, calls, true
}

// rateRecorder keeps the tightest rate-limit verdict of one HTTP request,
// and the verdicts the HTTP layer took for its tool calls, by tool name,
// for Handle to use.
type rateRecorder struct {
	mu      sync.Mutex
	v       consent.RateVerdict
	ok      bool
	pending map[string][]consent.RateVerdict
}

// decided records the verdict taken for a call of tool, for take.
func (r *rateRecorder) decided(tool string, v consent.RateVerdict) {
	r.observe(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string][]consent.RateVerdict{}
	}
	r.pending[tool] = append(r.pending[tool], v)
}

// take returns a verdict decided for a call of tool and forgets it; false
// when none is left (a nil recorder has none).
func (r *rateRecorder) take(tool string) (consent.RateVerdict, bool) {
	if r == nil {
		return consent.RateVerdict{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	vs := r.pending[tool]
	if len(vs) == 0 {
		return consent.RateVerdict{}, false
	}
	r.pending[tool] = vs[1:]
	return vs[0], true
}

// observe records a verdict; a nil recorder ignores it. A refusal beats an
// allowance, and then fewer remaining calls beat more.
func (r *rateRecorder) observe(v consent.RateVerdict) {
	if r == nil || !v.Limited() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.ok, r.v.Allowed && !v.Allowed, r.v.Allowed == v.Allowed && v.Remaining < r.v.Remaining:
		r.v, r.ok = v, true
	}
}

func (r *rateRecorder) verdict() (consent.RateVerdict, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v, r.ok
}

type rateRecorderKey struct{}

func withRateRecorder(ctx context.Context, r *rateRecorder) context.Context {
	return context.WithValue(ctx, rateRecorderKey{}, r)
}

// rateRecorderFrom returns the recorder of ctx's request, or nil.
func rateRecorderFrom(ctx context.Context) *rateRecorder {
	r, _ := ctx.Value(rateRecorderKey{}).(*rateRecorder)
	return r
}

// rateRecorderFromToken returns the recorder the HTTP middleware attached
// to the request a tool call came in.
func rateRecorderFromToken(req *mcpsdk.CallToolRequest) (*rateRecorder, bool) {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		r, ok := req.Extra.TokenInfo.Extra["rate"].(*rateRecorder)
		return r, ok
	}
	return nil, false
}

// rateHeaderWriter sets the X-RateLimit-* headers from its recorder just
// before the response starts.
type rateHeaderWriter struct {
	http.ResponseWriter
	rec  *rateRecorder
	once sync.Once
}

func (w *rateHeaderWriter) setHeaders() {
	w.once.Do(func() {
		if v, ok := w.rec.verdict(); ok {
			setRateHeaders(w.ResponseWriter.Header(), v)
		}
	})
}

func (w *rateHeaderWriter) WriteHeader(code int) {
	w.setHeaders()
	w.ResponseWriter.WriteHeader(code)
}

func (w *rateHeaderWriter) Write(b []byte) (int, error) {
	w.setHeaders()
	return w.ResponseWriter.Write(b)
}

// Flush keeps server-sent events streaming through the wrapper.
func (w *rateHeaderWriter) Flush() {
	w.setHeaders()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *rateHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setRateHeaders reports a verdict in the X-RateLimit-* headers (reset as
// Unix seconds), and Retry-After when refused.
func setRateHeaders(h http.Header, v consent.RateVerdict) {
	if !v.Limited() {
		return
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(v.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(v.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(v.Reset.Unix(), 10))
	if !v.Allowed {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(v)))
	}
}
