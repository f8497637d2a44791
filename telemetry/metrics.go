package telemetry

import (
	"context"
	"database/sql"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric Cairn defines.
const Namespace = "cairn"

// latencyBuckets spans what a tool call takes: from a cached read (well
// under a millisecond) to a call near its deadline (30 s by default).
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// sizeBuckets count items: entities of a store, hits of a search.
var sizeBuckets = []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

// Metrics are the Prometheus collectors of one Cairn process, on a
// registry of their own (never the global default), so that two servers in
// one test process do not share counts. A nil *Metrics records nothing:
// every method may be called on it.
type Metrics struct {
	// Registry holds every collector below, the Go runtime and the process
	// collectors; Handler serves it.
	Registry *prometheus.Registry

	toolCalls     *prometheus.CounterVec
	toolErrors    *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	consent       *prometheus.CounterVec
	rateRefusals  *prometheus.CounterVec
	storeEntities prometheus.Histogram
	searchHits    *prometheus.HistogramVec
	embedDuration *prometheus.HistogramVec
	embedTexts    prometheus.Counter
	queues        *queueCollector
}

// NewMetrics returns Metrics with every collector registered, the Go
// runtime's and the process's included.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "tool_calls_total",
			Help: "Tool calls answered, by tool (unknown for a name that is not a tool), transport and result code (OK or the error code).",
		}, []string{"tool", "transport", "code"}),
		toolErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "tool_errors_total",
			Help: "Tool calls that answered an error, by tool and error code.",
		}, []string{"tool", "code"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "tool_call_duration_seconds",
			Help:    "Time from receiving a tool call to having its answer and audit record, by tool.",
			Buckets: latencyBuckets,
		}, []string{"tool"}),
		consent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "consent_decisions_total",
			Help: "Distinct consent decisions of tool calls, by action, kind of resource and decision (allow or deny).",
		}, []string{"action", "resource", "decision"}),
		rateRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rate_limit_refusals_total",
			Help: "Requests refused because their key ran over its rate limit, by rate class.",
		}, []string{"class"}),
		storeEntities: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "store_entities",
			Help:    "Entities sent in one successful store call.",
			Buckets: sizeBuckets,
		}),
		searchHits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "search_hits",
			Help:    "Results answered by one successful search, by tool.",
			Buckets: sizeBuckets,
		}, []string{"tool"}),
		embedDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "embedder_duration_seconds",
			Help:    "Time of one embedder call (one batch of texts), by outcome (ok or error).",
			Buckets: latencyBuckets,
		}, []string{"outcome"}),
		embedTexts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "embedder_texts_total",
			Help: "Texts sent to the embedder.",
		}),
		queues: newQueueCollector(),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.toolCalls, m.toolErrors, m.toolDuration, m.consent, m.rateRefusals,
		m.storeEntities, m.searchHits, m.embedDuration, m.embedTexts, m.queues,
	)
	return m
}

// Handler serves the registry in the Prometheus exposition format (text,
// or protobuf/OpenMetrics when the scraper asks for them).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ToolCall records one answered tool call. tool must be a known tool's name
// or "unknown", transport one of the transports, code "OK" or an error
// code: the caller bounds them.
func (m *Metrics) ToolCall(tool, transport, code string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, transport, code).Inc()
	if code != "OK" {
		m.toolErrors.WithLabelValues(tool, code).Inc()
	}
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
}

// ConsentDecision records one distinct consent decision. resource must be
// a kind of resource (see ResourceKind), not a resource.
func (m *Metrics) ConsentDecision(action, resourceKind, decision string) {
	if m == nil {
		return
	}
	m.consent.WithLabelValues(action, resourceKind, decision).Inc()
}

// RateLimited records a request refused by the rate limiter.
func (m *Metrics) RateLimited(class string) {
	if m == nil {
		return
	}
	m.rateRefusals.WithLabelValues(class).Inc()
}

// StoreEntities records the entities of one store call.
func (m *Metrics) StoreEntities(n int) {
	if m == nil {
		return
	}
	m.storeEntities.Observe(float64(n))
}

// SearchHits records the results of one search by a tool.
func (m *Metrics) SearchHits(tool string, n int) {
	if m == nil {
		return
	}
	m.searchHits.WithLabelValues(tool).Observe(float64(n))
}

// resourceKinds are the kinds of consent resources (see consent's resource
// names); anything else is "other".
var resourceKinds = map[string]bool{
	"profile": true, "entities": true, "tables": true, "memories": true, "vectors": true,
	"graph": true, "schema": true, "sources": true, "audit": true, "*": true,
}

// ResourceKind returns the bounded kind of a consent resource: the part
// before its first slash ("entities" of "entities/person"), or "other".
// Entity types and memory collections are the user's names, so they never
// become label values.
func ResourceKind(resource string) string {
	kind := resource
	for i := 0; i < len(resource); i++ {
		if resource[i] == '/' {
			kind = resource[:i]
			break
		}
	}
	if resourceKinds[kind] {
		return kind
	}
	return "other"
}

// QueueStats is the state of a work queue at one moment.
type QueueStats struct {
	// Depth is how many items wait, claimed or not.
	Depth int
	// Oldest is when the oldest waiting item was enqueued; zero when the
	// queue is empty.
	Oldest time.Time
}

// WatchQueue makes the queue named name (a constant such as "outbox" or
// "jobs", never data) report its depth and the age of its oldest item on
// each scrape, as cairn_queue_depth and cairn_queue_oldest_age_seconds with
// the label queue=name. stats is called with a short deadline at each
// scrape; an error leaves the queue's series out of that scrape. This is
// the hook a job queue feeds once it exists.
func (m *Metrics) WatchQueue(name string, stats func(context.Context) (QueueStats, error)) {
	if m == nil {
		return
	}
	m.queues.watch(name, stats)
}

// WatchSQL exports the connection pool statistics of a database/sql pool
// as go_sql_* series with the label db_name=name (a constant such as
// "sqlite_write").
func (m *Metrics) WatchSQL(name string, db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// queueCollector asks each watched queue for its stats at scrape time.
type queueCollector struct {
	depth, age *prometheus.Desc

	mu     sync.Mutex
	queues map[string]func(context.Context) (QueueStats, error)
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		depth: prometheus.NewDesc(Namespace+"_queue_depth",
			"Items waiting in a work queue (the entity-embedding outbox; jobs), claimed or not.", []string{"queue"}, nil),
		age: prometheus.NewDesc(Namespace+"_queue_oldest_age_seconds",
			"Age of the oldest item waiting in a work queue; 0 when it is empty.", []string{"queue"}, nil),
		queues: map[string]func(context.Context) (QueueStats, error){},
	}
}

func (c *queueCollector) watch(name string, stats func(context.Context) (QueueStats, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues[name] = stats
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.age
}

// queueScrapeTimeout bounds one queue's stats query at scrape time.
const queueScrapeTimeout = 5 * time.Second

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	queues := make(map[string]func(context.Context) (QueueStats, error), len(c.queues))
	for k, v := range c.queues {
		queues[k] = v
	}
	c.mu.Unlock()
	for name, stats := range queues {
		ctx, cancel := context.WithTimeout(context.Background(), queueScrapeTimeout)
		s, err := stats(ctx)
		cancel()
		if err != nil {
			// The queue's series are left out of this scrape (absent()
			// alerts on it) rather than failing every other series.
			continue
		}
		age := 0.0
		if !s.Oldest.IsZero() {
			age = max(0, time.Since(s.Oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(s.Depth), name)
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age, name)
	}
}
