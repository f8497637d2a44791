package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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
	ta := newTelemetryApp(t, appConfig{metrics: telemetry.NewMetrics(),
		limits: map[consent.RateClass]int{consent.RateClassDefault: 1000, consent.RateClassStore: storeLimit}})
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
		{"sqlite write pool", series(t, fams, "go_sql_max_open_connections", map[string]string{"db_name": "sqlite_write"}).GetGauge().GetValue(), -1},
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
		audited[[3]string{string(d.Action), telemetry.ResourceKind(d.Resource), string(d.Decision)}]++
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
