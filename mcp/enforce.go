package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
)

// Transports, as the audit log names them.
const (
	TransportHTTP   = "http"
	TransportREST   = "rest"
	TransportStdio  = "stdio"
	TransportInProc = "inproc"
)

// Request is one tool call as a transport hands it to Handle.
type Request struct {
	Principal consent.Principal
	Tool      string
	Args      json.RawMessage
	// Transport names the transport in the audit log.
	Transport string
}

// Response is the outcome of one tool call: the JSON output or the error,
// and the rate-limit verdict for transports that report it in headers.
type Response struct {
	Output json.RawMessage
	Err    *Error
	Rate   consent.RateVerdict
	// RequestID identifies the call in the audit log and in errors.
	RequestID string
}

// Handle runs one tool call through the steps every transport shares:
// rate limit → find the tool → owner-only check → the consent the tool
// always needs → the handler, with a Caller whose Allowed asks the policy →
// the response budget → the audit log (the call and every consent decision
// it made). It never panics: a panicking handler is an internal error,
// logged with its stack.
func (s *Server) Handle(ctx context.Context, req Request) (resp Response) {
	defer s.deps.Activity.Begin()()
	start := time.Now()
	if req.Transport == "" {
		req.Transport = TransportInProc
	}
	t, known := s.byName[req.Tool]
	ctx, span, requestID := s.startToolSpan(ctx, t, req.Transport)
	resp.RequestID = requestID
	p := req.Principal
	var call *Call
	var res any
	fail := func(e *Error) {
		e.Body.TraceID = resp.RequestID
		resp.Output, resp.Err = nil, e
	}
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			if hp, ok := r.(handlerPanic); ok {
				r, stack = hp.value, hp.stack
			}
			s.log.ErrorContext(ctx, "tool panicked", "tool", req.Tool, "trace_id", resp.RequestID, "panic", fmt.Sprint(r), "stack", string(stack))
			fail(newError(http.StatusInternalServerError, CodeInternal, "internal error; the server log has the cause under this trace id", nil))
		}
		latency := time.Since(start)
		s.audit(ctx, req, call, &resp, latency)
		s.observe(req, t, call, &resp, res, latency)
		endToolSpan(span, &resp)
	}()

	// Every call counts against the key's limit, unknown tools too, so
	// that guessing names is limited like anything else.
	class := consent.RateClassDefault
	if known {
		class = t.RateClass
	}
	if s.deps.Limiter != nil {
		// Over HTTP the request's verdict was taken before the response
		// started (rateLimitMCP); elsewhere it is taken here.
		v, decided := rateRecorderFrom(ctx).take(req.Tool)
		if !decided {
			var err error
			if v, err = s.deps.Limiter.Allow(ctx, p.KeyID, class); err != nil {
				s.log.ErrorContext(ctx, "rate limit", "trace_id", resp.RequestID, "err", err)
				fail(newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "the rate limiter is unavailable; retry shortly", nil))
				return resp
			}
		}
		resp.Rate = v
		rateRecorderFrom(ctx).observe(v)
		if !v.Allowed {
			s.deps.Metrics.RateLimited(string(class))
			fail(rateLimited(v))
			return resp
		}
	}
	if !known {
		names := make([]string, len(s.tools))
		for i, t := range s.tools {
			names[i] = t.Name()
		}
		fail(newError(http.StatusNotFound, CodeUnknownTool, fmt.Sprintf("unknown tool %q", truncateText(req.Tool, 64)),
			map[string]any{"available_tools": names}))
		return resp
	}
	if t.OwnerOnly && !p.Owner {
		fail(newError(http.StatusForbidden, CodeForbidden, fmt.Sprintf("%s is for the owner agent only", t.Name()), nil))
		return resp
	}
	call = &Call{Principal: p, TraceID: resp.RequestID, Tool: t, Transport: req.Transport}
	if s.traced {
		call.traced = &tracedDecisions{ctx: ctx, tracer: s.tracer}
	}
	if s.deps.Policy != nil {
		pctx, pspan := s.tracer.Start(ctx, "consent.policy")
		d, err := s.deps.Policy.For(pctx, p)
		pspan.End()
		if err != nil {
			s.log.ErrorContext(ctx, "consent policy", "trace_id", resp.RequestID, "err", err)
			fail(newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "consent rules are unavailable; retry shortly", nil))
			return resp
		}
		call.decider = d
	}
	for _, r := range t.Requires {
		if err := call.Require(r.Action, r.Resource); err != nil {
			fail(toError(err))
			return resp
		}
	}
	args, budget, err := splitCallArgs(req.Args, t)
	if err != nil {
		fail(toError(err))
		return resp
	}
	callCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err = runHandler(callCtx, t, call, args.raw)
	if err != nil {
		e := toError(err)
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			e = timedOut(s.timeout)
		}
		if e.Status >= 500 {
			s.log.ErrorContext(ctx, "tool failed", "tool", t.Name(), "trace_id", resp.RequestID, "err", err)
		}
		fail(e)
		return resp
	}
	out, err := fitBudget(res, t, args, budget, start, resp.RequestID)
	if err != nil {
		s.log.ErrorContext(ctx, "encode result", "tool", t.Name(), "trace_id", resp.RequestID, "err", err)
		fail(newError(http.StatusInternalServerError, CodeInternal, "internal error; the server log has the cause under this trace id", nil))
		return resp
	}
	resp.Output = out
	return resp
}

// runHandler runs t's handler and returns what it returns, or ctx's error
// as soon as ctx is done: a handler stuck in a call that does not watch
// its context (a blocking read, a driver that ignores cancellation) must
// not hold the answer past the call's deadline, on any transport. Such a
// handler is left to finish on its own goroutine, and what it returns is
// dropped. A panic of the handler is raised again here, as a handlerPanic
// that carries the handler's stack, for Handle to recover.
func runHandler(ctx context.Context, t *Tool, call *Call, args json.RawMessage) (any, error) {
	type result struct {
		res      any
		err      error
		panicked *handlerPanic
	}
	done := make(chan result, 1) // the handler never waits to hand it over
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked = &handlerPanic{value: p, stack: debug.Stack()}
			}
			done <- r
		}()
		r.res, r.err = t.handle(ctx, call, args)
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done: // it ended with the context
		default:
			return nil, ctx.Err()
		}
	}
	if r.panicked != nil {
		panic(*r.panicked)
	}
	return r.res, r.err
}

// handlerPanic is a handler's panic, carried from its goroutine to Handle.
type handlerPanic struct {
	value any
	stack []byte
}

// audit records a call and every consent decision it made, and returns
// only once the records are durable, so that no call is answered without
// its audit record. If they cannot be written, the answer becomes
// SERVICE_UNAVAILABLE, whatever the call did: a success without an audit
// record must not go back.
func (s *Server) audit(ctx context.Context, req Request, call *Call, resp *Response, latency time.Duration) {
	code := "OK"
	if resp.Err != nil {
		code = resp.Err.Body.Code
	}
	s.log.DebugContext(ctx, "tool call", "tool", req.Tool, "user", req.Principal.UserID, "agent", req.Principal.AgentName, "code", code,
		"ms", latency.Milliseconds(), "trace_id", resp.RequestID)
	if s.deps.Audit == nil {
		return
	}
	p := req.Principal
	base := consent.AuditRecord{
		At: time.Now().UTC(), UserID: p.UserID, AgentID: p.AgentID, AgentName: p.AgentName, KeyID: p.KeyID,
		Transport: req.Transport, Tool: truncateText(req.Tool, 64), ResultCode: code, Latency: latency, RequestID: resp.RequestID,
	}
	callRec := base
	callRec.Kind, callRec.Decision = consent.AuditCall, consent.Allow
	if code == CodeConsentDenied || code == CodeForbidden {
		callRec.Decision = consent.Deny
	}
	records := []consent.AuditRecord{callRec}
	if call != nil && call.decider != nil {
		records = append(records, decisionRecords(base, call.decider.Decisions())...)
	}
	if err := s.deps.Audit.Record(context.WithoutCancel(ctx), records...); err != nil {
		s.log.ErrorContext(ctx, "audit log", "trace_id", resp.RequestID, "err", err)
		e := newError(http.StatusServiceUnavailable, CodeServiceUnavailable,
			"the audit log could not be written; the call's effects, if any, may have been applied", nil)
		e.Body.TraceID = resp.RequestID
		resp.Output, resp.Err = nil, e
	}
}

// decisionRecords are the audit records of a call's consent decisions: one
// per denial, always, and one per kind of resource for what was allowed (a
// context load checks every entity type, most of them empty: one record
// "read entities/* allow", counting them, not a dozen). A kind is what a
// resource names before its "/" (entities, memories); a resource without
// one (profile, graph) is a kind of its own. A kind allowed once keeps
// its resource's name.
func decisionRecords(base consent.AuditRecord, ds []consent.Decision) []consent.AuditRecord {
	type group struct {
		action   consent.Action
		kind     string
		resource string
		n        int
	}
	var out []consent.AuditRecord
	var groups []*group
	for _, d := range ds {
		if d.Effect != consent.Allow {
			r := base
			r.Kind, r.Action, r.Resource, r.Decision, r.Count = consent.AuditDecision, d.Action, d.Resource, d.Effect, 1
			out = append(out, r)
			continue
		}
		kind, _, _ := strings.Cut(d.Resource, "/")
		i := slices.IndexFunc(groups, func(g *group) bool { return g.action == d.Action && g.kind == kind })
		if i < 0 {
			groups = append(groups, &group{action: d.Action, kind: kind, resource: d.Resource})
			i = len(groups) - 1
		}
		groups[i].n++
	}
	for _, g := range groups {
		r := base
		r.Kind, r.Action, r.Resource, r.Decision, r.Count = consent.AuditDecision, g.action, g.resource, consent.Allow, g.n
		if g.n > 1 {
			r.Resource = g.kind + "/*"
		}
		out = append(out, r)
	}
	return out
}

// consentDenied is the error of a refused consent check, worded as
// Epitome words it.
func consentDenied(p consent.Principal, action consent.Action, resource string) *Error {
	return newError(http.StatusForbidden, CodeConsentDenied,
		fmt.Sprintf("Agent '%s' does not have %s access to %s", p.AgentName, action, resource),
		map[string]any{"resource": resource, "action": string(action)})
}

// timedOut is the error of a call that ran past its deadline and was
// cancelled.
func timedOut(d time.Duration) *Error {
	return newError(http.StatusGatewayTimeout, CodeTimeout,
		fmt.Sprintf("the call did not finish within its deadline of %v and was cancelled; narrow it (a smaller limit, fewer hops) or retry", d),
		map[string]any{"timeout_seconds": d.Seconds()})
}

// rateLimited is the error of a refused call, with when to retry.
func rateLimited(v consent.RateVerdict) *Error {
	secs := retryAfterSeconds(v)
	return newError(http.StatusTooManyRequests, CodeRateLimited,
		fmt.Sprintf("rate limit of %d calls a minute exceeded; retry in %d s", v.Limit, secs),
		map[string]any{"retry_after_seconds": secs, "limit": v.Limit, "reset": v.Reset.Unix()})
}

// retryAfterSeconds rounds up, so that a client waiting that long lands in
// the next window.
func retryAfterSeconds(v consent.RateVerdict) int {
	return max(1, int(math.Ceil(v.RetryAfter.Seconds())))
}
