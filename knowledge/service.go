// Package knowledge holds Cairn's domain services over the graph: the store
// pipeline that turns source material into observations, the deterministic
// reducer that turns observations into entity snapshots, the schema
// registry, corrections, merges, timeline events and relationships.
//
// The service knows nothing of MCP or of which backend it runs on: it is
// given a *graph.Store and a Caller, and returns domain values and the
// sentinel errors of errors.go.
package knowledge

import (
	"context"
	"log/slog"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// Service is the knowledge domain. It is safe for concurrent use.
type Service struct {
	graph    *graph.Store
	schemas  *schema.Registry
	now      func() time.Time
	log      *slog.Logger
	embedder embed.Embedder
	// bgEmbedder embeds entities in RunEntityEmbeddings (Options.BackgroundEmbedder).
	bgEmbedder embed.Embedder
	types      typeIndex
	profiles   ProfileStore
	// contradictions is nil when none are kept.
	contradictions ContradictionStore
	// forget keeps retractions and tombstones of graph data; nil refuses
	// to retract or erase it.
	forget GraphForgetStore
	// eraseFile removes an erased file source's bytes (SetFileEraser);
	// nil when files are not stored.
	eraseFile FileEraser
	// memories stores memories and insights; nil when not configured.
	memories *vector.Store
	// memoryIndex feeds context loading; nil when there are no memories.
	memoryIndex MemoryIndex
	// entityVecs keeps entity embeddings; nil when none are kept.
	entityVecs *vector.EntityStore
	// vecCache keeps the entity vectors topic ranking used; nil keeps
	// none (Options.EntityVectorCache).
	vecCache *entityVectorCache
	// textCache keeps the entity texts topic ranking read; nil keeps
	// none (Options.EntityVectorCache sizes it too).
	textCache *entityTextCache
	// flights shares the embedding of entity texts between concurrent
	// context loads (embedflight.go).
	flights embedFlights
	// maxFieldBytes bounds one stored field value (see checkFieldSize).
	maxFieldBytes int
	// limits bound context loads (defaultContextLimits).
	limits contextLimits
	// sourceTypes is Options.SourceTypes.
	sourceTypes func(ctx context.Context, userID, sourceID string) ([]string, error)
	// watchers are told what the graph's transactions changed (changes.go).
	watchers changeWatchers
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means graph.Now. Tests set it to make as-of
	// reads exact.
	Now func() time.Time
	// Embedder embeds memories, queries, entity types and context topics;
	// nil means the local deterministic embedder, embed.NewLocal.
	Embedder embed.Embedder
	// BackgroundEmbedder embeds entities in the worker that runs beside
	// the requests (RunEntityEmbeddings), so that it can be given fewer
	// cores than the requests get (embed.Limit); nil means Embedder. It
	// must embed into Embedder's space (the same Name).
	BackgroundEmbedder embed.Embedder
	// Profiles keeps user profiles; nil makes the profile calls fail with
	// ErrUnavailable (context loading then leaves the profile out).
	Profiles ProfileStore
	// Contradictions keeps contradictions between observations and the
	// observations a resolution rejected; nil means none are detected.
	Contradictions ContradictionStore
	// GraphForget keeps retractions and tombstones of graph data (the
	// control plane, with Contradictions, whose RejectedObservations must
	// answer the retractions too); nil makes Retract and Erase report
	// ErrUnavailable.
	GraphForget GraphForgetStore
	// Memories stores memories and insights; nil means the memory methods
	// report ErrMemoriesUnavailable.
	Memories *vector.Store
	// MemoryIndex lets context loading show memory collections and recent
	// memories; nil means Memories serves it (and, without Memories, the
	// context says memories are not available).
	MemoryIndex MemoryIndex
	// EntityEmbeddings keeps an embedding of every entity, written through
	// the graph's outbox (see RunEntityEmbeddings) and read by topic
	// ranking; nil means none are kept and topic ranking embeds its
	// candidates on every call.
	EntityEmbeddings *vector.EntityStore
	// EntityVectorCache is how many entity vectors topic ranking keeps in
	// memory, by the text they were made from, so that a context load
	// with a topic reads only the vectors of candidates whose text it has
	// not met (see entityVectorCache), and as many entity texts, so that
	// its keyword scan reads only the snapshots of candidates whose text
	// it has not met (entityTextCache): 0 means DefaultEntityVectorCache,
	// less than 0 none.
	EntityVectorCache int
	// MaxFieldBytes bounds every field value a call stores (entity fields,
	// unknown fields, corrections, relationship metadata, provenance,
	// memory metadata and claims; a profile has its own bound,
	// MaxProfileBytes, on the whole), measured as the bytes
	// of its JSON encoding; a call with a value over it is refused whole
	// with a *ValidationError naming the field. Zero or less means
	// DefaultMaxFieldBytes.
	MaxFieldBytes int
	// SourceTypes returns the entity types a source was found to hold
	// (the types its interpretation stored: see files.Service.SourceTypes);
	// a memory that names the source carries them (MemoryRequest.Types).
	// nil means sources carry no types.
	SourceTypes func(ctx context.Context, userID, sourceID string) ([]string, error)
}

// NewService returns a Service over a graph and a schema registry.
func NewService(g *graph.Store, schemas *schema.Registry, opts Options) *Service {
	s := &Service{
		graph: g, schemas: schemas, now: opts.Now, log: opts.Logger, embedder: opts.Embedder,
		profiles: opts.Profiles, contradictions: opts.Contradictions, forget: opts.GraphForget,
		memories: opts.Memories, memoryIndex: opts.MemoryIndex, entityVecs: opts.EntityEmbeddings,
		maxFieldBytes: opts.MaxFieldBytes, limits: defaultContextLimits, vecCache: newEntityVectorCache(opts.EntityVectorCache),
		textCache:   newEntityTextCache(opts.EntityVectorCache),
		sourceTypes: opts.SourceTypes,
	}
	if s.maxFieldBytes <= 0 {
		s.maxFieldBytes = DefaultMaxFieldBytes
	}
	if s.memoryIndex == nil && s.memories != nil {
		s.memoryIndex = storeIndex{s}
	}
	if s.embedder == nil {
		s.embedder = embed.NewLocal()
	}
	s.bgEmbedder = opts.BackgroundEmbedder
	if s.bgEmbedder == nil {
		s.bgEmbedder = s.embedder
	}
	if s.now == nil {
		s.now = graph.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Schemas returns the service's schema registry.
func (s *Service) Schemas() *schema.Registry { return s.schemas }

// Caller is who a call runs for and what it may read and change. Entities
// and memories the caller may not read do not exist for it: reads report
// them exactly as missing ids, and lists, searches and traversals leave
// them out.
type Caller struct {
	UserID  string
	AgentID string
	// Allowed decides whether the caller may act on a resource, named as
	// the consent rules name it: EntityResource(type),
	// MemoryResource(collection), ResourceProfile, …. nil allows
	// everything.
	Allowed func(action Action, resource string) bool
}

// Action is what a caller does to a resource.
type Action string

// The actions consent distinguishes.
const (
	Read  Action = "read"
	Write Action = "write"
	// Delete is retracting or erasing (see DeleteMemories).
	Delete Action = "delete"
)

// Resources that are not per type or per collection.
const (
	ResourceProfile = "profile"
	ResourceGraph   = "graph"
	ResourceSchema  = "schema"
	ResourceSources = "sources"
	ResourceAudit   = "audit"
)

// EntityResource names the entities of one type.
func EntityResource(entityType string) string { return "entities/" + entityType }

// MemoryResource names the memories of one collection.
func MemoryResource(collection string) string { return "memories/" + collection }

// May reports whether the caller may act on a resource.
func (c Caller) May(action Action, resource string) bool {
	return c.Allowed == nil || c.Allowed(action, resource)
}

func (c Caller) readable(entityType string) bool { return c.May(Read, EntityResource(entityType)) }

// readableOf returns those of types the caller may read, in their order.
func (c Caller) readableOf(types []string) []string {
	out := []string{}
	for _, t := range types {
		if c.readable(t) {
			out = append(out, t)
		}
	}
	return out
}

// MayReadAll reports whether the caller may read entities of every one of
// types: the test a record derived from a source passes before the caller
// sees it, types being what the source was found to hold (an invoice's
// text is invoice data, whatever collection it lands in).
func (c Caller) MayReadAll(types []string) bool {
	for _, t := range types {
		if !c.readable(t) {
			return false
		}
	}
	return true
}
func (c Caller) writable(entityType string) bool { return c.May(Write, EntityResource(entityType)) }

// clock returns the current time, truncated like every stored time.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
