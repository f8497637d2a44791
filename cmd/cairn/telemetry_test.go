package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/telemetry"
)

// telemetryApp is a Cairn wired in-process on a fresh embedded store as
// serve wires it, behind httptest, with its owner's key and a reader agent
// that may read entities and nothing else.
type telemetryApp struct {
	app       *app
	srv       *httptest.Server
	ownerKey  string
	readerKey string
	reader    consent.Principal
}

func newTelemetryApp(t *testing.T, cfg appConfig) *telemetryApp {
	t.Helper()
	ctx := t.Context()
	cfg.dataDir = t.TempDir()
	a, err := openApp(ctx, cfg, slog.New(telemetry.LogHandler(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ownerKey, err := bootstrapOwner(ctx, a, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	owner, err := a.control.OwnerPrincipal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := a.control.CreateAgent(ctx, owner.UserID, "reader")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.control.SetRule(ctx, consent.Rule{UserID: owner.UserID, AgentID: agent.ID, Action: consent.Read, Pattern: "entities/*", Effect: consent.Allow}); err != nil {
		t.Fatal(err)
	}
	readerKey, _, err := a.control.CreateKey(ctx, owner.UserID, agent.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, reader, err := a.control.KeyByHash(ctx, consent.HashKey(readerKey))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.mcp.HTTPHandler(mcp.HTTPOptions{Auth: a.auth}))
	t.Cleanup(srv.Close)
	return &telemetryApp{app: a, srv: srv, ownerKey: ownerKey, readerKey: readerKey, reader: reader}
}

// session connects an MCP client over Streamable HTTP with key.
func (ta *telemetryApp) session(t *testing.T, key string) *mcpsdk.ClientSession {
	t.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: ta.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawCall calls a tool and returns its result, error or not.
func rawCall(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) *mcpsdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// scrape reads /metrics with key and returns its status and parsed families.
func scrape(t *testing.T, url, key string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Accept", "text/plain") // the text exposition format
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse as the Prometheus text format: %v", err)
	}
	return resp.StatusCode, families
}

// series returns the metric of family name whose labels are exactly want.
func series(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	f, ok := families[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return m
		}
	}
	t.Fatalf("no series %s%v", name, want)
	return nil
}

// TestMetricsAfterASession drives a scripted session over HTTP (stores up
// to the store limit and one over it, a memory saved and searched, an
// unknown tool, an agent allowed and denied), then reads /metrics as a
// scraper would and finds each series with the count the session implies.
// Every label is checked against an allow-list of names and a bounded set of
// values, so that no id or user data reaches a label.
func TestMetricsAfterASession(t *testing.T) {
	const storeLimit = 2
	// The limiter's windows are a minute of its clock: the wall clock
	// would let the third store through when a minute ends between the
	// stores.
	windowStart := time.Now().Truncate(time.Minute)
	ta := newTelemetryApp(t, appConfig{metrics: telemetry.NewMetrics(),
		limits:    map[consent.RateClass]int{consent.RateClassDefault: 1000, consent.RateClassStore: storeLimit},
		rateClock: func() time.Time { return windowStart }})
	ctx := t.Context()
	owner := ta.session(t, ta.ownerKey)

	storeBatches := [][]map[string]any{
		{{"entity_type": "company", "name": "Acme"}, {"entity_type": "person", "name": "Ada Lovelace"}},
		{{"entity_type": "company", "name": "Globex"}},
	}
	entityIDs := map[string]bool{}
	var secrets []string // values that must not appear in any label
	for _, batch := range storeBatches {
		res := rawCall(t, owner, "store", map[string]any{"entities": batch})
		if res.IsError {
			t.Fatalf("store: %+v", res.Content)
		}
		out := res.StructuredContent.(map[string]any)
		for _, e := range out["entities"].([]any) {
			id := e.(map[string]any)["entity_id"].(string)
			entityIDs[id] = true
			secrets = append(secrets, id)
		}
		secrets = append(secrets, out["source_id"].(string))
	}
	if res := rawCall(t, owner, "store", map[string]any{"entities": storeBatches[1]}); !res.IsError {
		t.Fatal("a store over the store limit succeeded")
	}
	if res := rawCall(t, owner, "save_memory", map[string]any{"collection": "notes", "text": "Ada prefers tea in the afternoon"}); res.IsError {
		t.Fatalf("save_memory: %+v", res.Content)
	}
	res := rawCall(t, owner, "search_memory", map[string]any{"collection": "notes", "query": "tea"})
	if res.IsError {
		t.Fatalf("search_memory: %+v", res.Content)
	}
	hits := len(res.StructuredContent.(map[string]any)["results"].([]any))
	const unknownTool = "ent_0123456789abcdef0123"
	if res := rawCall(t, owner, unknownTool, map[string]any{}); !res.IsError {
		t.Fatal("an unknown tool succeeded")
	}
	secrets = append(secrets, unknownTool, "notes", "Ada", "Acme", ta.reader.UserID, ta.reader.AgentID, ta.reader.KeyID, ta.ownerKey, ta.readerKey)
	// The reader agent, in process: reading entities allowed, writing memories denied.
	if _, merr := ta.app.mcp.Invoke(ctx, ta.reader, "retrieve_entities", []byte(`{}`)); merr != nil {
		t.Fatalf("reader retrieve_entities: %v", merr)
	}
	if _, merr := ta.app.mcp.Invoke(ctx, ta.reader, "save_memory", []byte(`{"collection":"notes","text":"x"}`)); merr == nil || merr.Body.Code != mcp.CodeConsentDenied {
		t.Fatalf("reader save_memory = %v, want CONSENT_DENIED", merr)
	}

	url := ta.srv.URL + "/metrics"
	if code, _ := scrape(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a key: %d, want 401", code)
	}
	if code, _ := scrape(t, url, ta.readerKey); code != http.StatusForbidden {
		t.Errorf("/metrics with an agent's key: %d, want 403", code)
	}
	code, fams := scrape(t, url, ta.ownerKey)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the owner's key: %d", code)
	}

	counter := func(name string, labels map[string]string) float64 {
		return series(t, fams, name, labels).GetCounter().GetValue()
	}
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"store OK over http", counter("cairn_tool_calls_total", map[string]string{"tool": "store", "transport": "http", "code": "OK"}), float64(len(storeBatches))},
		{"store refused over http", counter("cairn_tool_calls_total", map[string]string{"tool": "store", "transport": "http", "code": mcp.CodeRateLimited}), 1},
		{"store errors by code", counter("cairn_tool_errors_total", map[string]string{"tool": "store", "code": mcp.CodeRateLimited}), 1},
		{"unknown tool", counter("cairn_tool_errors_total", map[string]string{"tool": "unknown", "code": mcp.CodeUnknownTool}), 1},
		{"denied save", counter("cairn_tool_errors_total", map[string]string{"tool": "save_memory", "code": mcp.CodeConsentDenied}), 1},
		{"in-process call", counter("cairn_tool_calls_total", map[string]string{"tool": "retrieve_entities", "transport": "inproc", "code": "OK"}), 1},
		{"rate-limit refusals", counter("cairn_rate_limit_refusals_total", map[string]string{"class": "store"}), 1},
		{"consent deny", counter("cairn_consent_decisions_total", map[string]string{"action": "write", "resource": "memories", "decision": "deny"}), 1},
		{"store latencies", float64(series(t, fams, "cairn_tool_call_duration_seconds", map[string]string{"tool": "store"}).GetHistogram().GetSampleCount()), float64(len(storeBatches) + 1)},
		{"store calls sized", float64(series(t, fams, "cairn_store_entities", map[string]string{}).GetHistogram().GetSampleCount()), float64(len(storeBatches))},
		{"entities stored", series(t, fams, "cairn_store_entities", map[string]string{}).GetHistogram().GetSampleSum(), float64(len(storeBatches[0]) + len(storeBatches[1]))},
		{"searches sized", float64(series(t, fams, "cairn_search_hits", map[string]string{"tool": "search_memory"}).GetHistogram().GetSampleCount()), 1},
		{"search hits", series(t, fams, "cairn_search_hits", map[string]string{"tool": "search_memory"}).GetHistogram().GetSampleSum(), float64(hits)},
		// The worker is not running (openApp, not startApp): every stored
		// entity waits in the outbox.
		{"outbox depth", series(t, fams, "cairn_queue_depth", map[string]string{"queue": "outbox"}).GetGauge().GetValue(), float64(len(entityIDs))},
		{"embedder calls", float64(series(t, fams, "cairn_embedder_duration_seconds", map[string]string{"outcome": "ok"}).GetHistogram().GetSampleCount()), -1},
		// The Write pool has no maximum (0: see db/sqlite's sizePool) and
		// keeps the connections the session opened.
		{"sqlite write pool", series(t, fams, "go_sql_open_connections", map[string]string{"db_name": "sqlite_write"}).GetGauge().GetValue(), -1},
	}
	for _, c := range checks {
		if c.want == -1 { // present and positive is all that is known
			if c.got <= 0 {
				t.Errorf("%s: %v, want > 0", c.name, c.got)
			}
			continue
		}
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics (go_goroutines)")
	}
	if _, ok := fams["process_cpu_seconds_total"]; !ok {
		t.Error("no process metrics (process_cpu_seconds_total)")
	}
	if age := series(t, fams, "cairn_queue_oldest_age_seconds", map[string]string{"queue": "outbox"}).GetGauge().GetValue(); age < 0 {
		t.Errorf("outbox age %v", age)
	}
	// Every consent decision series counts what the audit log recorded.
	decisions, err := ta.app.control.QueryAudit(ctx, consent.AuditQuery{UserID: ta.reader.UserID, Kind: consent.AuditDecision, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	audited := map[[3]string]float64{}
	for _, d := range decisions {
		audited[[3]string{string(d.Action), telemetry.ResourceKind(d.Resource), string(d.Decision)}] += float64(max(d.Count, 1))
	}
	if len(audited) < 2 {
		t.Fatalf("the audit log holds %d kinds of decision, want allow and deny at least", len(audited))
	}
	for k, n := range audited {
		if got := counter("cairn_consent_decisions_total", map[string]string{"action": k[0], "resource": k[1], "decision": k[2]}); got != n {
			t.Errorf("consent decisions %v: %v, the audit log has %v", k, got, n)
		}
	}
	if n := len(fams["cairn_consent_decisions_total"].GetMetric()); n != len(audited) {
		t.Errorf("%d consent decision series, the audit log has %d kinds", n, len(audited))
	}
	checkLabels(t, fams, ta.app.mcp, secrets)
}

// checkLabels fails on a label name outside the allow-list, a value outside
// its name's bounded set, and any value that looks like an id or holds one
// of secrets.
func checkLabels(t *testing.T, fams map[string]*dto.MetricFamily, srv *mcp.Server, secrets []string) {
	t.Helper()
	var tools []string
	for _, tool := range srv.Tools() {
		tools = append(tools, tool.Name())
	}
	errorCode := regexp.MustCompile(`^[A-Z][A-Z_]+$`)
	number := regexp.MustCompile(`^(\+Inf|-?[0-9.e+-]+)$`)
	bounded := map[string]func(string) bool{
		"tool":      func(v string) bool { return v == "unknown" || slices.Contains(tools, v) },
		"transport": func(v string) bool { return slices.Contains([]string{"http", "rest", "stdio", "inproc", "other"}, v) },
		"code":      func(v string) bool { return v == "OK" || errorCode.MatchString(v) && len(v) <= 32 },
		"action":    func(v string) bool { return v == "read" || v == "write" },
		"resource": func(v string) bool {
			return slices.Contains([]string{"profile", "entities", "tables", "memories", "vectors", "graph", "schema", "sources", "audit", "*", "other"}, v)
		},
		"decision": func(v string) bool { return v == "allow" || v == "deny" },
		"class":    func(v string) bool { return slices.Contains([]string{"default", "store", "upload"}, v) },
		"queue":    func(v string) bool { return v == "outbox" || v == "jobs" },
		"outcome":  func(v string) bool { return v == "ok" || v == "error" },
		"db_name":  func(v string) bool { return slices.Contains([]string{"sqlite_write", "sqlite_read"}, v) },
		"le":       number.MatchString,
		"quantile": number.MatchString,
		"cause":    func(v string) bool { return v == "encoding" || v == "gathering" },
		// go_info's Go version.
		"version": regexp.MustCompile(`^go[0-9.a-z]+$`).MatchString,
	}
	idLike := regexp.MustCompile(`(?i)(^|[^a-z])(ent|src|mem|usr|agt|key|obs|rel|trace)_[0-9a-z]{6,}|[0-9a-f]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-`)
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				ok, known := bounded[l.GetName()]
				if !known {
					t.Errorf("%s: label %q is not on the allow-list", name, l.GetName())
					continue
				}
				v := l.GetValue()
				if !ok(v) {
					t.Errorf("%s: label %s=%q is outside its bounded set", name, l.GetName(), v)
				}
				if idLike.MatchString(v) {
					t.Errorf("%s: label %s=%q looks like an id", name, l.GetName(), v)
				}
				for _, s := range secrets {
					if s != "" && strings.Contains(v, s) {
						t.Errorf("%s: label %s=%q holds user data %q", name, l.GetName(), v, s)
					}
				}
			}
		}
	}
}

// TestMetricsAddrServesWithoutKey checks the --metrics-addr listener: the
// metrics, with no key.
func TestMetricsAddrServesWithoutKey(t *testing.T) {
	url, stop, err := serveMetrics("127.0.0.1:0", telemetry.NewMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if code, fams := scrape(t, url, ""); code != http.StatusOK || fams["go_goroutines"] == nil {
		t.Errorf("--metrics-addr: %d, %d families", code, len(fams))
	}
}

// collector stands in for an OpenTelemetry collector: it decodes the
// OTLP/HTTP protobuf requests of the trace exporter and keeps their spans.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spanTree indexes exported spans.
type spanTree struct {
	byID map[string]*tracepb.Span
	all  []*tracepb.Span
}

func (c *collector) tree() spanTree {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := spanTree{byID: map[string]*tracepb.Span{}, all: slices.Clone(c.spans)}
	for _, s := range c.spans {
		st.byID[hex.EncodeToString(s.GetSpanId())] = s
	}
	return st
}

// find returns the spans of a trace with a name.
func (st spanTree) find(traceID, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range st.all {
		if hex.EncodeToString(s.GetTraceId()) == traceID && s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// under reports whether s descends from ancestor.
func (st spanTree) under(s, ancestor *tracepb.Span) bool {
	for p := st.byID[hex.EncodeToString(s.GetParentSpanId())]; p != nil; p = st.byID[hex.EncodeToString(p.GetParentSpanId())] {
		if p == ancestor {
			return true
		}
	}
	return false
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

// TestTraceOfAToolCall sends spans to a collector stand-in and checks the
// tree of tool calls over Streamable HTTP: the MCP request, under it the
// tool, under that the consent decisions, the database work and the
// embedder; and that the trace id is the call's request id and the
// trace_id of its error envelope.
func TestTraceOfAToolCall(t *testing.T) {
	col := &collector{}
	colSrv := httptest.NewServer(col)
	defer colSrv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": colSrv.URL}
	tracing, err := telemetry.NewTracing(t.Context(), func(k string) string { return env[k] }, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.Enabled {
		t.Fatal("tracing is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	ta := newTelemetryApp(t, appConfig{tracing: tracing})

	owner := ta.session(t, ta.ownerKey)
	res := rawCall(t, owner, "save_memory", map[string]any{"collection": "notes", "text": "Ada prefers tea"})
	if res.IsError {
		t.Fatalf("save_memory: %+v", res.Content)
	}
	saved := res.StructuredContent.(map[string]any)["meta"].(map[string]any)["request_id"].(string)
	res = rawCall(t, owner, "store", map[string]any{"entities": []any{map[string]any{"entity_type": "company", "name": "Acme"}}})
	if res.IsError {
		t.Fatalf("store: %+v", res.Content)
	}
	stored := res.StructuredContent.(map[string]any)["meta"].(map[string]any)["request_id"].(string)
	reader := ta.session(t, ta.readerKey)
	res = rawCall(t, reader, "save_memory", map[string]any{"collection": "notes", "text": "x"})
	if !res.IsError {
		t.Fatal("the reader saved a memory")
	}
	var envelope mcp.Envelope
	if err := json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &envelope); err != nil {
		t.Fatal(err)
	}
	denied := envelope.Error.TraceID
	if err := tracing.Shutdown(t.Context()); err != nil { // exports what is buffered
		t.Fatal(err)
	}
	st := col.tree()

	// tool returns the tool span of a call, under its MCP request span.
	tool := func(traceID, name string) *tracepb.Span {
		t.Helper()
		tools := st.find(traceID, "tool "+name)
		if len(tools) != 1 {
			t.Fatalf("trace %s: %d spans named %q, want 1 (request id not a trace id?)", traceID, len(tools), "tool "+name)
		}
		reqs := st.find(traceID, "mcp tools/call")
		if len(reqs) != 1 || !st.under(tools[0], reqs[0]) {
			t.Fatalf("trace %s: the tool span is not under one MCP tools/call span (%d of them)", traceID, len(reqs))
		}
		if reqs[0].GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("the MCP request span is %v, want a server span", reqs[0].GetKind())
		}
		return tools[0]
	}
	// below requires, under the tool span, at least one span named name.
	below := func(traceID string, toolSpan *tracepb.Span, name string) *tracepb.Span {
		t.Helper()
		for _, s := range st.find(traceID, name) {
			if st.under(s, toolSpan) {
				return s
			}
		}
		t.Errorf("trace %s: no %q span under %q", traceID, name, toolSpan.GetName())
		return nil
	}

	save := tool(saved, "save_memory")
	below(saved, save, "consent.policy")
	if d := below(saved, save, "consent.decide"); d != nil && spanAttr(d, "cairn.consent.decision") != "allow" {
		t.Errorf("the owner's consent decision: %q, want allow", spanAttr(d, "cairn.consent.decision"))
	}
	below(saved, save, "embed")
	below(saved, save, "memories.insert")

	store := tool(stored, "store")
	below(stored, store, "graph.update")

	refused := tool(denied, "save_memory")
	if d := below(denied, refused, "consent.decide"); d != nil && spanAttr(d, "cairn.consent.decision") != "deny" {
		t.Errorf("the reader's consent decision: %q, want deny", spanAttr(d, "cairn.consent.decision"))
	}
	if got := spanAttr(refused, "cairn.error.code"); got != mcp.CodeConsentDenied {
		t.Errorf("the refused call's span has error code %q, want %s", got, mcp.CodeConsentDenied)
	}
	for _, s := range st.all {
		if spanAttr(s, "cairn.consent.resource_kind") == "notes" || strings.Contains(s.GetName(), "notes") {
			t.Errorf("span %q names a collection", s.GetName())
		}
	}
}

// TestTracingOffByDefault: no OTLP endpoint, no tracing; request ids keep
// their own form.
func TestTracingOffByDefault(t *testing.T) {
	tracing, err := telemetry.NewTracing(t.Context(), func(string) string { return "" }, "test")
	if err != nil || tracing.Enabled {
		t.Fatalf("NewTracing without an endpoint: %+v, %v", tracing, err)
	}
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
	} {
		if tr, err := telemetry.NewTracing(t.Context(), func(k string) string { return env[k] }, "test"); err != nil || tr.Enabled {
			t.Errorf("%v: enabled %v, %v", env, tr != nil && tr.Enabled, err)
		}
	}
	if _, err := telemetry.NewTracing(t.Context(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	}, "test"); err == nil {
		t.Error("OTEL_EXPORTER_OTLP_PROTOCOL=grpc was accepted; only http/protobuf is exported")
	}
}
