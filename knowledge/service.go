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
	"log/slog"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// Service is the knowledge domain. It is safe for concurrent use.
type Service struct {
	graph   *graph.Store
	schemas *Registry
	now     func() time.Time
	log     *slog.Logger
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means graph.Now. Tests set it to make as-of
	// reads exact.
	Now func() time.Time
}

// NewService returns a Service over a graph and a schema registry.
func NewService(g *graph.Store, schemas *Registry, opts Options) *Service {
	s := &Service{graph: g, schemas: schemas, now: opts.Now, log: opts.Logger}
	if s.now == nil {
		s.now = graph.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Schemas returns the service's schema registry.
func (s *Service) Schemas() *Registry { return s.schemas }

// Caller is who a call runs for and which entity types it may see and
// change. Entities the caller may not read do not exist for it: reads report
// ErrEntityNotFound exactly as for a missing id, and lists and traversals
// leave them out.
type Caller struct {
	UserID  string
	AgentID string
	// CanRead reports whether the caller may read entities of a type; nil
	// allows every type.
	CanRead func(entityType string) bool
	// CanWrite reports whether the caller may write entities of a type; nil
	// allows every type.
	CanWrite func(entityType string) bool
}

func (c Caller) readable(entityType string) bool { return c.CanRead == nil || c.CanRead(entityType) }
func (c Caller) writable(entityType string) bool { return c.CanWrite == nil || c.CanWrite(entityType) }

// clock returns the current time, truncated like every stored time.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
