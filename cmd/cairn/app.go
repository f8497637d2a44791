package main

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"time"

	"gocloud.dev/blob"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/mcp"
	"github.com/cairnkg/cairn/telemetry"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// app is a wired Cairn: stores, services and the MCP server.
type app struct {
	log       *slog.Logger
	backend   *backend
	control   *controlplane.Store
	graph     *graph.Store
	memories  *vector.Store
	knowledge *knowledge.Service
	mcp       *mcp.Server
	auth      *consent.Authenticator
	audit     *consent.AuditLog
	// embedNote says why memories are embedded by another embedder than
	// the built-in model (a binary without it, a store kept in the
	// lexical space); /readyz reports it. Empty otherwise.
	embedNote string
	// stops stop the background work that background started and wait
	// for it, in the order it started.
	stops []func()
	// discardStore removes the store a start created, should the start
	// fail; nil once it succeeded (see startApp).
	discardStore func()
	// files, its bucket and the consent policy its jobs run under
	// (files.go).
	files  *files.Service
	bucket *blob.Bucket
	policy *consent.Policy
	// limiter counts the uploads jobs make of their own (attachments)
	// against the rate limit of the key that queued them.
	limiter *consent.Limiter
}

// appConfig is what opening an app needs.
type appConfig struct {
	dataDir string
	// databaseURL selects PostgreSQL when not empty.
	databaseURL string
	mcp         mcp.Options
	limits      map[consent.RateClass]int
	// rateClock is the rate limiter's clock; nil means time.Now. Tests
	// that count on a limit fix it, so that no window ends mid-test.
	rateClock func() time.Time
	// embedder embeds memories, entity types and topics; nil means the
	// local one.
	embedder embed.Embedder
	// maxFieldBytes bounds a stored field value; 0 means
	// knowledge.DefaultMaxFieldBytes.
	maxFieldBytes int

	// neo4j puts the graph in Neo4j when its URI is set.
	neo4j neo4jSettings
	// auditRetention is how long audit records are kept; zero Keep keeps
	// them forever.
	auditRetention controlplane.AuditRetention
	// files configures file storage and interpretation (files.go).
	files fileSettings
	// metrics records what the process does, for /metrics; nil records
	// nothing.
	metrics *telemetry.Metrics
	// tracing makes spans; nil is telemetry.Off().
	tracing *telemetry.Tracing
}

// openApp opens the backend (migrating it) and wires the services.
func openApp(ctx context.Context, cfg appConfig, log *slog.Logger) (*app, error) {
	b, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a := &app{log: log, backend: b}
	a.control = controlplane.New(b.control, b.dialect)
	graphDriver, memDriver, embedder := b.graph, telemetry.MemoryDriver(b.memories()), cfg.embedder
	if cfg.tracing != nil && cfg.tracing.Enabled {
		graphDriver, memDriver = telemetry.TraceGraph(graphDriver, cfg.tracing), telemetry.TraceMemories(memDriver, cfg.tracing)
	}
	b.watch(cfg.metrics)
	a.graph = graph.NewStore(graphDriver)
	a.memories = vector.NewStore(memDriver)
	if c, ok := embedder.(embedChoice); ok {
		if c, err = keepRecordedSpace(ctx, c, a.memories, log); err != nil {
			a.Close()
			return nil, err
		}
		embedder, a.embedNote = c.Embedder, c.note
	}
	activity := &mcp.Activity{}
	background := backgroundEmbedder(embedder, activity, runtime.GOMAXPROCS(0))
	if cfg.metrics != nil || cfg.tracing != nil && cfg.tracing.Enabled {
		if embedder == nil {
			embedder = embed.NewLocal()
		}
		embedder = telemetry.InstrumentEmbedder(embedder, cfg.metrics, cfg.tracing)
		if background != nil {
			background = telemetry.InstrumentEmbedder(background, cfg.metrics, cfg.tracing)
		}
	}
	a.knowledge = knowledge.NewService(a.graph, schema.NewPersistentRegistry(a.control), knowledge.Options{
		Logger: log, Embedder: embedder, BackgroundEmbedder: background, Memories: a.memories,
		Profiles: a.control, Contradictions: a.control.WithReader(b.reader()), GraphForget: a.control,
		EntityEmbeddings: vector.NewEntityStore(memDriver), MaxFieldBytes: cfg.maxFieldBytes,
		SourceTypes: files.SourceTypes(a.control),
	})
	a.auth = consent.NewAuthenticator(a.control, nil)
	cfg.mcp.Version = version()
	deps := mcp.Deps{Knowledge: a.knowledge, Logger: log, Metrics: cfg.metrics, Tracing: cfg.tracing, Activity: activity}
	a.wireConsent(&deps, cfg)
	a.policy, a.limiter = deps.Policy, deps.Limiter
	if err := a.openFiles(ctx, cfg, &deps); err != nil {
		a.Close()
		return nil, err
	}
	a.mcp, err = mcp.NewServer(deps, cfg.mcp)
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// background runs fn in a goroutine of its own until ctx ends or the app
// closes: Close cancels fn's context and waits for it to return, the work
// started last first. The start* methods run the process's background work
// through it, once a start has succeeded.
func (a *app) background(ctx context.Context, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	a.stops = append(a.stops, func() {
		cancel()
		<-done
	})
}

// startEntityEmbeddings runs the worker that keeps entity embeddings
// current. Its first act is to drain what the outbox holds: entities whose
// embeddings a stopped process did not write (it logs how many it
// repaired).
func (a *app) startEntityEmbeddings(ctx context.Context) {
	a.background(ctx, a.knowledge.RunEntityEmbeddings)
}

// startTextSigBackfill gives the entities stored without a text signature
// (before migration 016) theirs, so that context loads screen them by it
// too, and logs how many, with progress on a large store. A store that has
// none left costs one look at an empty index (a walk of the ids on Neo4j).
func (a *app) startTextSigBackfill(ctx context.Context) {
	a.background(ctx, a.backfillTextSigs)
}

// backfillTextSigs is startTextSigBackfill's work.
func (a *app) backfillTextSigs(ctx context.Context) {
	start, logged := time.Now(), time.Now()
	n, err := graph.BackfillTextSigs(ctx, a.backend.graph, func(done int) {
		if time.Since(logged) >= 10*time.Second {
			a.log.Info("giving stored entities their text signatures", "done", done)
			logged = time.Now()
		}
	})
	if n > 0 {
		a.log.Info("gave stored entities their text signatures", "entities", n, "took", time.Since(start).Round(time.Millisecond))
	}
	if err != nil && ctx.Err() == nil {
		a.log.Warn("text signatures of stored entities", "err", err)
	}
}

// Close stops the background work and releases the stores; after a start
// that failed, it then removes the store that start created.
func (a *app) Close() {
	for i := len(a.stops) - 1; i >= 0; i-- {
		a.stops[i]()
	}
	if a.bucket != nil {
		_ = a.bucket.Close()
	}
	a.closeConsent()
	if err := errors.Join(a.memories.Close(), a.graph.Close(), a.backend.Close()); err != nil {
		a.log.Warn("close", "err", err)
	}
	if a.discardStore != nil {
		a.discardStore()
	}
}

// backgroundEmbedder is what the entity-embedding worker embeds with, on a
// machine of cores cores. The built-in model runs on the machine's own
// cores, so the worker's share is kept from the requests: it is limited to
// all cores but one (its Embed otherwise spreads every batch over all of
// them), and on two cores or fewer, where one core is not enough for the
// calls, it also embeds a few texts at a time, each time once the tool
// calls counted by activity have paused for a lull, so that a bulk load is
// not slowed by embedding what it stored (docs/performance.md). Other
// embedders (the lexical one is cheap, a remote provider uses no local
// cores) are used as they are: nil.
func backgroundEmbedder(e embed.Embedder, activity *mcp.Activity, cores int) embed.Embedder {
	if !inProcess(e) {
		return nil
	}
	if cores > 2 {
		return embed.Limit(e, cores-1)
	}
	bg := e
	if cores == 2 {
		bg = embed.Limit(e, 1)
	}
	return embed.Paced(bg, backgroundChunk, func(ctx context.Context) error {
		return activity.WaitIdle(ctx, backgroundLull, backgroundPatience)
	})
}

// The pace of the entity-embedding worker with the built-in model on two
// cores or fewer: it embeds backgroundChunk texts at a time, once no tool
// call has been in flight for backgroundLull, or once it has waited
// backgroundPatience, so that it still gets on under steady traffic (some
// 16 texts a second at the least).
const (
	backgroundChunk    = 8
	backgroundLull     = 50 * time.Millisecond
	backgroundPatience = 500 * time.Millisecond
)
