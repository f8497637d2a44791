package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/telemetry"
)

// What the MCP layer tells an operator: the span of each MCP request and
// tool call (with the trace id as the call's request id), one span per
// distinct consent decision while tracing is on, and the metrics of calls,
// consent and rate limits. Label values are bounded here: a tool's name
// only if it is one of ours, a transport and a code from our constants.

// mcpMethods are the MCP methods a request span is named after; any other
// name (a client's invention) is "other", so that span names stay few.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/roots/list_changed": true,
}

// startRequestSpan starts the span of one MCP request (JSON-RPC method).
func (s *Server) startRequestSpan(ctx context.Context, method, transport string) (context.Context, trace.Span) {
	name := method
	if !mcpMethods[method] {
		name = "other"
	}
	return s.tracer.Start(ctx, "mcp "+name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("mcp.method.name", name), attribute.String("cairn.transport", transport)))
}

// startToolSpan starts the span of one tool call and returns the call's
// request id: the trace id when the call is traced (so that an error
// envelope or meta.request_id leads to the trace), a fresh id otherwise.
func (s *Server) startToolSpan(ctx context.Context, t *Tool, transport string) (context.Context, trace.Span, string) {
	name := "unknown"
	if t != nil {
		name = t.Name()
	}
	ctx, span := s.tracer.Start(ctx, "tool "+name, trace.WithAttributes(
		attribute.String("gen_ai.tool.name", name), attribute.String("cairn.transport", transport)))
	if sc := span.SpanContext(); sc.HasTraceID() {
		return ctx, span, sc.TraceID().String()
	}
	return ctx, span, newTraceID()
}

// endToolSpan records the outcome of a call on its span and ends it.
func endToolSpan(span trace.Span, resp *Response) {
	if resp.Err != nil {
		span.SetAttributes(attribute.String("cairn.error.code", resp.Err.Body.Code))
		if resp.Err.Status >= 500 {
			span.SetStatus(codes.Error, resp.Err.Body.Code)
		}
	}
	span.End()
}

// observe records one answered call in the metrics: the call, its
// distinct consent decisions, and the size of a store or a search.
func (s *Server) observe(req Request, t *Tool, call *Call, resp *Response, res any, latency time.Duration) {
	m := s.deps.Metrics
	if m == nil {
		return
	}
	tool := "unknown"
	if t != nil {
		tool = t.Name()
	}
	code := "OK"
	if resp.Err != nil {
		code = resp.Err.Body.Code
	}
	m.ToolCall(tool, transportLabel(req.Transport), code, latency)
	if call != nil && call.decider != nil {
		for _, d := range call.decider.Decisions() {
			m.ConsentDecision(string(d.Action), telemetry.ResourceKind(d.Resource), string(d.Effect))
		}
	}
	if resp.Err != nil {
		return
	}
	switch r := res.(type) {
	case StoreOut:
		m.StoreEntities(len(r.Entities))
	case SearchMemoryOut:
		m.SearchHits(tool, len(r.Results))
	case QueryInsightsOut:
		m.SearchHits(tool, len(r.Insights))
	}
}

// transportLabel bounds Request.Transport, which in-process callers set.
func transportLabel(t string) string {
	switch t {
	case TransportHTTP, TransportREST, TransportStdio, TransportInProc:
		return t
	}
	return "other"
}

// tracedDecisions gives each distinct consent decision of a traced call a
// span of its own, under the tool's span.
type tracedDecisions struct {
	ctx    context.Context
	tracer trace.Tracer
	mu     sync.Mutex
	seen   map[consent.Decision]bool
}

// allowed decides through d, in a span the first time the call asks this
// question.
func (td *tracedDecisions) allowed(d *consent.Decider, action consent.Action, resource string) bool {
	q := consent.Decision{Action: action, Resource: resource}
	td.mu.Lock()
	seen := td.seen[q]
	if !seen {
		if td.seen == nil {
			td.seen = map[consent.Decision]bool{}
		}
		td.seen[q] = true
	}
	td.mu.Unlock()
	if seen {
		return d.Allowed(action, resource)
	}
	_, span := td.tracer.Start(td.ctx, "consent.decide", trace.WithAttributes(
		attribute.String("cairn.consent.action", string(action)),
		attribute.String("cairn.consent.resource_kind", telemetry.ResourceKind(resource))))
	ok := d.Allowed(action, resource)
	effect := consent.Deny
	if ok {
		effect = consent.Allow
	}
	span.SetAttributes(attribute.String("cairn.consent.decision", string(effect)))
	span.End()
	return ok
}

// withTraceContext continues the trace of a request whose traceparent
// header names one (W3C Trace Context), when tracing is on.
func (s *Server) withTraceContext(next http.Handler) http.Handler {
	if !s.traced {
		return next
	}
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			r = r.WithContext(prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}

// ownerOnly answers FORBIDDEN unless the authenticated principal is the
// owner's agent (what /metrics on the main listener needs).
func ownerOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := r.Context().Value(principalKey{}).(consent.Principal); !ok || !p.Owner {
			sendError(w, newError(http.StatusForbidden, CodeForbidden, "metrics are for the owner's key only (or serve them on --metrics-addr)", nil), mcpShape)
			return
		}
		next.ServeHTTP(w, r)
	})
}
