package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/telemetry"
)

// Deps are the services tools call. Handlers get them passed in, never from
// globals.
type Deps struct {
	Knowledge *knowledge.Service
	Logger    *slog.Logger
	// Policy decides consent; nil allows every call everything (tests of
	// tools that are not about consent).
	Policy *consent.Policy
	// Limiter enforces per-key rate limits; nil means no limits.
	Limiter *consent.Limiter
	// Audit records every call and consent decision; nil records nothing.
	Audit *consent.AuditLog
	// Consent manages rules and reads the audit log, for the consent
	// toolset; nil leaves those tools answering SERVICE_UNAVAILABLE.
	Consent ConsentStore
	// Files stores files and runs their interpretation; nil leaves store's
	// file forms and the files toolset answering SERVICE_UNAVAILABLE.
	Files *files.Service
	// FileRoots are the directories store's file_path may read from (stdio
	// only); empty refuses file_path.
	FileRoots []string
	// Metrics counts calls, errors, consent decisions and rate-limit
	// refusals, and is served on /metrics; nil records nothing.
	Metrics *telemetry.Metrics
	// Tracing makes a span of each MCP request, tool call and consent
	// decision, and its trace id is the call's request id; nil is
	// telemetry.Off().
	Tracing *telemetry.Tracing
	// Activity counts the calls in flight, for background work that waits
	// for a lull (see Activity); nil counts nothing.
	Activity *Activity
	// allowGlobalSchemas is Options.AllowGlobalSchemas, which NewServer
	// sets.
	allowGlobalSchemas bool
}

// AllTools returns every tool Cairn has, in a stable order.
func AllTools(d Deps) []*Tool {
	tools := []*Tool{
		storeTool(d),
		listEntityTypesTool(d),
		registerSchemaTool(d),
		updateSchemaIncrementalTool(d),
		analyzeSchemaCandidatesTool(d),
		getSchemaRecommendationsTool(d),
		retrieveEntitySnapshotTool(d),
		retrieveEntitiesTool(d),
		retrieveEntityByIdentifierTool(d),
		listObservationsTool(d),
		retrieveFieldProvenanceTool(d),
		listSourcesTool(d),
		correctTool(d),
		mergeEntitiesTool(d),
		retractTool(d),
		eraseTool(d),
		listTimelineEventsTool(d),
		createRelationshipTool(d),
		createRelationshipsTool(d),
		deleteRelationshipTool(d),
		listRelationshipsTool(d),
		getRelationshipSnapshotTool(d),
		retrieveRelatedEntitiesTool(d),
		retrieveGraphNeighborhoodTool(d),
		queryGraphTool(d),
		saveMemoryTool(d),
		saveMemoriesTool(d),
		searchMemoryTool(d),
		updateMemoryTool(d),
		deleteMemoryTool(d),
		storeInsightTool(d),
		queryInsightsTool(d),
		getUserContextTool(d),
		updateProfileTool(d),
		reviewMemoriesTool(d),
	}
	tools = append(tools, fileTools(d)...)
	tools = append(tools, consentTools(d)...)
	tools = append(tools, tablesTools(d)...)
	return append(tools, compatTools(tools)...)
}

// AllToolsets lists every toolset, in a stable order.
var AllToolsets = []Toolset{ToolsetEntities, ToolsetRelationships, ToolsetTimeline, ToolsetSchema, ToolsetSchemaRegistry,
	ToolsetMemories, ToolsetMemoryImport, ToolsetContext, ToolsetConsent, ToolsetFiles, ToolsetTables, ToolsetForget, ToolsetCompat}

// DefaultToolsets are the toolsets a server exposes unless told otherwise:
// every toolset but those an agent needs only for some jobs (changing
// schemas by hand, importing memories in bulk, the Epitome tables view,
// Neotoma v0's names), which
// would push tools/list past MaxToolsListBytes.
var DefaultToolsets = []Toolset{ToolsetEntities, ToolsetRelationships, ToolsetTimeline, ToolsetSchema,
	ToolsetMemories, ToolsetContext, ToolsetConsent, ToolsetFiles}

// Options choose which tools a Server exposes. The zero value exposes all.
type Options struct {
	// Toolsets limits the tools to these toolsets; nil means
	// DefaultToolsets.
	Toolsets []Toolset
	// ReadOnly drops every tool that writes.
	ReadOnly bool
	// Version is reported to clients as the server version.
	Version string
	// AllowGlobalSchemas lets the owner agent register and change global
	// schemas (register_schema, update_schema_incremental without
	// user_specific); the operator turns it on (--allow-global-schemas).
	AllowGlobalSchemas bool
	// CallTimeout is the deadline of one tool call; past it the call's
	// context is cancelled and it answers TIMEOUT. 0 means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// ProgressEvery is how often a call that a client asked progress of
	// (a progressToken) says it is still working; 0 means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
	// SubscriptionPoll is how often a server with open MCP sessions reads
	// the graph's change log for what other processes changed, to notify
	// resource subscribers (this process's changes are told at once); 0
	// means DefaultSubscriptionPoll.
	SubscriptionPoll time.Duration
}

// DefaultCallTimeout is the deadline of a tool call unless
// Options.CallTimeout says otherwise.
const DefaultCallTimeout = 30 * time.Second

// Server is Cairn's MCP surface: the enabled tools and the one dispatch path
// (Invoke) that every transport uses.
type Server struct {
	deps    Deps
	tools   []*Tool
	byName  map[string]*Tool
	log     *slog.Logger
	version string
	timeout time.Duration
	// progressEvery is Options.ProgressEvery.
	progressEvery time.Duration
	// tracer makes the spans of calls; traced says whether they are
	// exported, which is when consent decisions get spans of their own.
	tracer trace.Tracer
	traced bool
	// subs are the MCP sessions and their resource subscriptions.
	subs *subscriptions
}

// NewServer returns a Server with the tools opts selects.
func NewServer(d Deps, opts Options) (*Server, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	for _, ts := range opts.Toolsets {
		if !slices.Contains(AllToolsets, ts) {
			return nil, fmt.Errorf("mcp: unknown toolset %q (known: %v)", ts, AllToolsets)
		}
	}
	if opts.CallTimeout < 0 {
		return nil, fmt.Errorf("mcp: call timeout %v is negative", opts.CallTimeout)
	}
	if d.Tracing == nil {
		d.Tracing = telemetry.Off()
	}
	s := &Server{deps: d, byName: map[string]*Tool{}, log: d.Logger, version: opts.Version, timeout: cmp.Or(opts.CallTimeout, DefaultCallTimeout), progressEvery: cmp.Or(max(opts.ProgressEvery, 0), DefaultProgressEvery),
		tracer: d.Tracing.Tracer(), traced: d.Tracing.Enabled}
	d.allowGlobalSchemas = opts.AllowGlobalSchemas
	s.subs = newSubscriptions(s, opts.SubscriptionPoll)
	toolsets := opts.Toolsets
	if toolsets == nil {
		toolsets = DefaultToolsets
	}
	for _, t := range AllTools(d) {
		if !slices.Contains(toolsets, t.Toolset) {
			continue
		}
		if opts.ReadOnly && !t.ReadOnly() {
			continue
		}
		s.tools = append(s.tools, t)
		s.byName[t.Name()] = t
	}
	// Aliases answer calls but are not listed. A listed tool of the same
	// name (the compat toolset lists v0's names) keeps the name.
	for _, t := range s.tools {
		for _, a := range t.Aliases {
			if _, taken := s.byName[a]; !taken {
				s.byName[a] = t
			}
		}
	}
	return s, nil
}

// Tools returns the enabled tools.
func (s *Server) Tools() []*Tool { return s.tools }

// Invoke runs one tool call for a principal through Handle and returns the
// tool's JSON output, or the error to send.
func (s *Server) Invoke(ctx context.Context, p consent.Principal, name string, args json.RawMessage) (json.RawMessage, *Error) {
	r := s.Handle(ctx, Request{Principal: p, Tool: name, Args: args, Transport: TransportInProc})
	return r.Output, r.Err
}

// PrincipalFunc tells an MCP server who is calling, from what the transport
// attached to the request (over HTTP, the verified key).
type PrincipalFunc func(ctx context.Context, extra *mcpsdk.RequestExtra) (consent.Principal, error)

// MCPServer returns an official-SDK server exposing the tools, with every
// call dispatched through Invoke for the principal that who returns.
func (s *Server) MCPServer(who PrincipalFunc) *mcpsdk.Server {
	return s.mcpServer(who, TransportStdio)
}

func (s *Server) mcpServer(who PrincipalFunc, transport string) *mcpsdk.Server {
	var resources []resourceSpec
	subscribe, unsubscribe := s.subs.handlers(who, transport, &resources)
	if !s.servesResources() {
		subscribe, unsubscribe = nil, nil
	}
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "cairn", Title: "Cairn", Version: s.version}, &mcpsdk.ServerOptions{
		Logger: s.log,
		Instructions: "Cairn keeps what you learn about the user as a knowledge graph with provenance. " +
			"Call list_entity_types before store; every fact can be traced with retrieve_field_provenance. " +
			"Answers fit a budget (max_response_bytes lowers it): when meta.truncated, call again with the same arguments " +
			"and cursor set to meta.next_cursor for the rest.",
		CompletionHandler:  s.completions(who, transport),
		Capabilities:       s.capabilities(),
		SubscribeHandler:   subscribe,
		UnsubscribeHandler: unsubscribe,
	})
	call := func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		p, err := who(ctx, req.Extra)
		if err != nil {
			return errorResult(toError(err)), nil
		}
		if rec, ok := rateRecorderFromToken(req); ok {
			ctx = withRateRecorder(ctx, rec)
		}
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			r := &progressReporter{send: func(progress, total float64, msg string) {
				_ = req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{ProgressToken: tok, Progress: progress, Total: total, Message: msg})
			}}
			ctx = withProgress(ctx, r.report)
			defer r.run(s.progressEvery)()
		}
		r := s.Handle(ctx, Request{Principal: p, Tool: req.Params.Name, Args: req.Params.Arguments, Transport: transport})
		if r.Err != nil {
			logDenial(ctx, req, r.Err)
			return errorResult(r.Err), nil
		}
		return &mcpsdk.CallToolResult{
			StructuredContent: r.Output,
			Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: string(r.Output)}},
		}, nil
	}
	for _, t := range s.tools {
		srv.AddTool(t.Def(), call)
	}
	s.addPrompts(srv, who, transport)
	resources = s.addResources(srv, who, transport)
	if len(resources) > 0 {
		// Every session is registered at its first request, and resource
		// notifications reach only those consent lets read them
		// (subscriptions.go). Adding a template again is how the SDK is
		// made to tell the sessions that the resource list changed.
		h := &hub{srv: srv, relist: func() {
			srv.AddResourceTemplate(resources[0].tmpl, func(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
				return s.readResource(ctx, who, transport, req, resources)
			})
		}}
		srv.AddSendingMiddleware(s.subs.filter)
		srv.AddReceivingMiddleware(s.subs.middleware(who, h))
	}
	// The SDK answers a call of a tool it does not know with a protocol
	// error, which hosts show as a failure with nothing to go on. Such calls
	// go through Handle instead, like any other: they are rate-limited and
	// audited, and answer the tool error TOOL_NOT_FOUND listing the
	// available tools, as the REST facade does.
	srv.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			ctx, span := s.startRequestSpan(ctx, method, transport)
			defer span.End()
			if ctr, ok := req.(*mcpsdk.CallToolRequest); ok && method == "tools/call" && ctr.Params != nil {
				if _, known := s.byName[ctr.Params.Name]; !known {
					return call(ctx, ctr)
				}
			}
			// neotoma:// is an alias of cairn:// (Neotoma v1's scheme).
			if rr, ok := req.(*mcpsdk.ReadResourceRequest); ok && rr.Params != nil {
				if rest, ok := strings.CutPrefix(rr.Params.URI, resourceSchemeAlias); ok {
					rr.Params.URI = resourceScheme + rest
				}
			}
			// The resources a caller may read depend on the caller and the
			// data: resources/list is answered per request, not from a
			// fixed list.
			if method == "resources/list" && len(resources) > 0 {
				run, err := s.runnerFor(ctx, who, req.GetExtra(), transport)
				if err != nil {
					return nil, rpcError(err)
				}
				cursor := ""
				if lr, ok := req.(*mcpsdk.ListResourcesRequest); ok && lr.Params != nil {
					cursor = lr.Params.Cursor
				}
				res, err := s.listResources(ctx, run, cursor)
				return res, rpcError(err)
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// capabilities are what initialize advertises: exactly what is served.
// The tools, prompts and resource templates are fixed for the server's
// life, so their lists never change; resources/list is answered per
// request from the data, and its changes are told (subscriptions.go), as
// are updates of the resources a session subscribed to.
func (s *Server) capabilities() *mcpsdk.ServerCapabilities {
	caps := &mcpsdk.ServerCapabilities{Logging: &mcpsdk.LoggingCapabilities{}, Completions: &mcpsdk.CompletionCapabilities{}}
	if len(s.tools) > 0 {
		caps.Tools = &mcpsdk.ToolCapabilities{}
	}
	for _, p := range promptSpecs() {
		if s.hasTools(p.tools...) {
			caps.Prompts = &mcpsdk.PromptCapabilities{}
		}
	}
	if s.servesResources() {
		caps.Resources = &mcpsdk.ResourceCapabilities{Subscribe: true, ListChanged: true}
	}
	return caps
}

// servesResources reports whether any resource template's tools are
// enabled.
func (s *Server) servesResources() bool {
	for _, r := range resourceSpecs() {
		if s.hasTools(r.tools...) {
			return true
		}
	}
	return false
}

// errorResult is a tool error as MCP carries it: IsError with the envelope
// as JSON text. It has no structured content, which clients would check
// against the tool's output schema.
func errorResult(e *Error) *mcpsdk.CallToolResult {
	b, _ := json.Marshal(e.Envelope())
	return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: string(b)}}}
}

func newTraceID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "trace_" + hex.EncodeToString(b)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// logDenial tells a client that asked for log messages at warning or below
// (logging/setLevel, or the request's log level in protocols that carry it
// on each request) that consent refused one of its calls: a
// notifications/message from the logger "cairn.consent" with the tool, the
// code, the message and the trace id the call's answer already holds, so
// that a host can show denials apart from the conversation. The SDK sends
// nothing to a client that asked for no level or a higher one.
func logDenial(ctx context.Context, req *mcpsdk.CallToolRequest, e *Error) {
	if e.Body.Code != CodeConsentDenied || req.Session == nil {
		return
	}
	_ = req.Session.Log(ctx, &mcpsdk.LoggingMessageParams{Level: "warning", Logger: "cairn.consent", Data: map[string]any{
		"tool": req.Params.Name, "code": e.Body.Code, "message": e.Body.Message, "trace_id": e.Body.TraceID,
	}})
}
