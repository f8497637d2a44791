package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// RelationshipQuery selects an entity's relationships.
type RelationshipQuery struct {
	EntityID  string
	Direction graph.Direction
	Type      string
	At        time.Time
	Page      graph.Page
}

// checkDirection accepts the three directions and the empty string (both).
func checkDirection(d graph.Direction) error {
	switch d {
	case "", graph.Both, graph.Inbound, graph.Outbound:
		return nil
	}
	return invalid("direction", "one of: inbound, outbound, both", "string", "must be inbound, outbound or both")
}

// ListRelationships returns a page of an entity's relationships, newest
// first, leaving out those whose other end the caller may not read.
func (s *Service) ListRelationships(ctx context.Context, c Caller, q RelationshipQuery) ([]graph.Relationship, int, error) {
	if err := checkDirection(q.Direction); err != nil {
		return nil, 0, err
	}
	var out []graph.Relationship
	var total int
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		if _, err := s.readableEntity(ctx, tx, c, q.EntityID, true); err != nil {
			return err
		}
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		out, total, err = tx.ListRelationships(ctx, graph.RelationshipFilter{
			UserID: c.UserID, EntityID: q.EntityID, Direction: q.Direction, Type: q.Type, At: q.At,
			EntityTypes: types, Page: q.Page,
		})
		return err
	})
	return out, total, err
}

// RelationshipSnapshot returns a relationship with its metadata reduced from
// its observations, and those observations.
func (s *Service) RelationshipSnapshot(ctx context.Context, c Caller, relType, source, target string) (graph.Relationship, []graph.RelationshipObservation, error) {
	var rel graph.Relationship
	var obs []graph.RelationshipObservation
	if _, err := s.relationshipType(ctx, c.UserID, relType); err != nil {
		return rel, nil, err
	}
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		for _, id := range []string{source, target} {
			if _, err := s.readableEntity(ctx, tx, c, id, true); err != nil {
				return err
			}
		}
		var err error
		rel, err = tx.Relationship(ctx, c.UserID, graph.RelationshipID(relType, source, target))
		if errors.Is(err, graph.ErrNotFound) {
			return &NotFoundError{Kind: ErrRelationshipNotFound, ID: relType + ":" + source + ":" + target}
		}
		if err != nil {
			return err
		}
		obs, err = tx.RelationshipObservations(ctx, c.UserID, rel.ID)
		return err
	})
	return rel, obs, err
}

// DeleteRelationship ends a live relationship. It stays visible to as-of
// reads of the time it was live.
func (s *Service) DeleteRelationship(ctx context.Context, c Caller, relType, source, target string) (graph.Relationship, error) {
	var rel graph.Relationship
	err := s.graph.Update(ctx, func(tx *graph.Tx) error {
		for _, id := range []string{source, target} {
			if _, err := s.readableEntity(ctx, tx, c, id, true); err != nil {
				return err
			}
		}
		var err error
		rel, err = tx.EndRelationship(ctx, c.UserID, graph.RelationshipID(relType, source, target), s.clock())
		if errors.Is(err, graph.ErrNotFound) {
			return &NotFoundError{Kind: ErrRelationshipNotFound, ID: relType + ":" + source + ":" + target}
		}
		return err
	})
	return rel, err
}

// RelatedQuery asks for the entities around one entity.
type RelatedQuery struct {
	EntityID  string
	Types     []string // relationship types; nil means any
	Direction graph.Direction
	MaxHops   int // 1..graph.MaxHopsLimit; 0 means 1
	At        time.Time
	// MaxResults caps the entities returned (0: graph.DefaultMaxResults).
	MaxResults int
}

// Related is what RelatedEntities found.
type Related struct {
	Start         graph.Entity
	Reached       []graph.Reached
	Entities      map[string]graph.Entity // by id, for every reached entity
	Relationships []graph.Edge
	HopsTraversed int
	Truncated     bool
}

// RelatedEntities walks up to MaxHops from an entity. It never returns nor
// walks through an entity the caller may not read.
func (s *Service) RelatedEntities(ctx context.Context, c Caller, q RelatedQuery) (Related, error) {
	if q.MaxHops == 0 {
		q.MaxHops = 1
	}
	if q.MaxHops < 1 || q.MaxHops > graph.MaxHopsLimit {
		return Related{}, invalid("max_hops", fmt.Sprintf("integer 1..%d", graph.MaxHopsLimit), "number",
			"must be between 1 and %d, got %d", graph.MaxHopsLimit, q.MaxHops)
	}
	if err := checkDirection(q.Direction); err != nil {
		return Related{}, err
	}
	var out Related
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		start, err := s.readableEntity(ctx, tx, c, q.EntityID, false)
		if err != nil {
			return err
		}
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		res, err := tx.Traverse(ctx, graph.TraverseQuery{
			UserID: c.UserID, Start: start.ID, Direction: q.Direction, Types: q.Types, MaxHops: q.MaxHops,
			At: q.At, EntityTypes: types, MaxResults: q.MaxResults,
		})
		if err != nil {
			return err
		}
		ids := make([]string, len(res.Entities))
		for i, r := range res.Entities {
			ids[i] = r.EntityID
		}
		ents, err := tx.Entities(ctx, c.UserID, ids)
		if err != nil {
			return err
		}
		out = Related{Start: start, Reached: res.Entities, Entities: map[string]graph.Entity{},
			Relationships: res.Relationships, HopsTraversed: res.HopsTraversed, Truncated: res.Truncated}
		for _, e := range ents {
			out.Entities[e.ID] = e
		}
		return nil
	})
	return out, err
}

// NeighborhoodQuery asks for the graph context of a node.
type NeighborhoodQuery struct {
	NodeID string
	// NodeType is "entity" (default) or "source".
	NodeType            string
	IncludeObservations bool
	// Limit caps each list (0 means 100).
	Limit int
}

// Neighborhood is the graph context of an entity or a source.
type Neighborhood struct {
	Entity          *graph.Entity
	Source          *graph.Source
	Relationships   []graph.Relationship
	RelatedEntities []graph.Entity
	Sources         []graph.Source
	Events          []graph.TimelineEvent
	Observations    []graph.Observation
}

// Neighborhood returns an entity's live relationships, the readable entities
// at their other ends, the sources its observations came from and its
// timeline events; or, for a source, the readable entities it produced
// observations for, their relationships and the events it dated. A source
// the caller may not read (see ListSources) is ErrSourceNotFound.
func (s *Service) Neighborhood(ctx context.Context, c Caller, q NeighborhoodQuery) (Neighborhood, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var out Neighborhood
	err := s.graph.View(ctx, func(tx *graph.Tx) error {
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		var entityIDs []string
		switch q.NodeType {
		case "", "entity":
			e, err := s.readableEntity(ctx, tx, c, q.NodeID, false)
			if err != nil {
				return err
			}
			out.Entity = &e
			entityIDs = []string{e.ID}
			obs, _, err := tx.Observations(ctx, c.UserID, e.ID, graph.Page{Limit: limit})
			if err != nil {
				return err
			}
			if q.IncludeObservations {
				out.Observations = obs
			}
			var srcIDs []string
			for _, o := range obs {
				if !slices.Contains(srcIDs, o.SourceID) {
					srcIDs = append(srcIDs, o.SourceID)
				}
			}
			for _, id := range srcIDs {
				src, err := tx.Source(ctx, c.UserID, id)
				if err != nil {
					return err
				}
				out.Sources = append(out.Sources, src)
			}
			out.Events, _, err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: c.UserID, EntityID: e.ID, Page: graph.Page{Limit: limit}})
			if err != nil {
				return err
			}
		case "source":
			if err := checkID("node_id", q.NodeID); err != nil {
				return err
			}
			src, err := tx.Source(ctx, c.UserID, q.NodeID)
			if errors.Is(err, graph.ErrNotFound) {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: q.NodeID}
			}
			if err != nil {
				return err
			}
			out.Source = &src
			obs, err := tx.ObservationsBySource(ctx, c.UserID, src.ID)
			if err != nil {
				return err
			}
			readsSome := false
			for _, o := range obs {
				if !c.readable(o.EntityType) {
					continue
				}
				readsSome = true
				if !slices.Contains(entityIDs, o.EntityID) {
					entityIDs = append(entityIDs, o.EntityID)
				}
				if q.IncludeObservations && len(out.Observations) < limit {
					out.Observations = append(out.Observations, o)
				}
			}
			// As ListSources: a caller that may read only some types
			// does not see a source that produced none of them (a
			// file's consent is its own, below).
			if types != nil && !readsSome && src.Kind != graph.SourceFile {
				return &NotFoundError{Kind: ErrSourceNotFound, ID: q.NodeID}
			}
			ents, err := tx.Entities(ctx, c.UserID, entityIDs)
			if err != nil {
				return err
			}
			out.RelatedEntities = ents
			out.Events, _, err = tx.ListTimelineEvents(ctx, graph.TimelineFilter{UserID: c.UserID, SourceID: src.ID, EntityTypes: types, Page: graph.Page{Limit: limit}})
			if err != nil {
				return err
			}
		default:
			return invalid("node_type", "one of: entity, source", "string", "must be entity or source")
		}
		seen := map[string]bool{}
		var others []string
		for _, id := range entityIDs {
			rels, _, err := tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: c.UserID, EntityID: id, EntityTypes: types, Page: graph.Page{Limit: limit}})
			if err != nil {
				return err
			}
			for _, r := range rels {
				if seen[r.ID] || len(out.Relationships) >= limit {
					continue
				}
				seen[r.ID] = true
				out.Relationships = append(out.Relationships, r)
				for _, end := range []string{r.SourceEntityID, r.TargetEntityID} {
					if !slices.Contains(entityIDs, end) && !slices.Contains(others, end) {
						others = append(others, end)
					}
				}
			}
		}
		if q.NodeType != "source" {
			ents, err := tx.Entities(ctx, c.UserID, others)
			if err != nil {
				return err
			}
			out.RelatedEntities = ents
		}
		return nil
	})
	if err != nil {
		return Neighborhood{}, err
	}
	// Consent on files: a file the caller may not read is not there, and
	// a batch interpreted from one does not name it.
	if out.Source != nil {
		srcs, err := s.redactSources(ctx, c, []graph.Source{*out.Source})
		if err != nil {
			return Neighborhood{}, err
		}
		if len(srcs) == 0 {
			return Neighborhood{}, &NotFoundError{Kind: ErrSourceNotFound, ID: q.NodeID}
		}
		out.Source = &srcs[0]
	}
	if out.Sources, err = s.redactSources(ctx, c, out.Sources); err != nil {
		return Neighborhood{}, err
	}
	return out, nil
}

// Pattern is a query_graph pattern: entities of a type whose snapshot field
// equals or contains a value, optionally with an edge of a type to a
// neighbour of a type.
type Pattern struct {
	EntityType       string
	Field            string
	Equals           any
	Contains         string
	RelationshipType string
	NeighborType     string
	Direction        graph.Direction
	Limit            int // 0 means 100
}

// PatternMatch is one entity a pattern matched, with the edges that
// satisfied the relationship part.
type PatternMatch struct {
	Entity graph.Entity
	Edges  []graph.Edge
}

// maxPatternScan bounds how many entities a pattern query inspects.
const maxPatternScan = 20_000

// MatchPattern finds the readable entities that match a pattern. It scans at
// most maxPatternScan entities (most recently observed first) and reports
// truncated when it stopped early or found more than the limit.
func (s *Service) MatchPattern(ctx context.Context, c Caller, p Pattern) (matches []PatternMatch, truncated bool, err error) {
	if p.Field == "" && (p.Equals != nil || p.Contains != "") {
		return nil, false, invalid("pattern.field", "a field name", "missing", "is required with equals or contains")
	}
	if err := checkDirection(p.Direction); err != nil {
		return nil, false, err
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	err = s.graph.View(ctx, func(tx *graph.Tx) error {
		types, err := s.readableTypes(ctx, tx, c)
		if err != nil {
			return err
		}
		f := graph.EntityFilter{UserID: c.UserID, Types: types}
		if p.EntityType != "" {
			if types != nil && !slices.Contains(types, p.EntityType) {
				return nil
			}
			f.Types = []string{p.EntityType}
		}
		const pageSize = 500
		for offset := 0; offset < maxPatternScan; offset += pageSize {
			f.Page = graph.Page{Limit: pageSize, Offset: offset}
			ents, total, err := tx.ListEntities(ctx, f)
			if err != nil {
				return err
			}
			var cands []graph.Entity
			for _, e := range ents {
				if fieldMatches(e.Snapshot[p.Field], p) {
					cands = append(cands, e)
				}
			}
			if err := s.matchEdges(ctx, tx, c, types, cands, p, &matches); err != nil {
				return err
			}
			if len(matches) > limit {
				matches, truncated = matches[:limit], true
				return nil
			}
			if offset+pageSize >= total {
				return nil
			}
		}
		truncated = true
		return nil
	})
	return matches, truncated, err
}

// fieldMatches applies a pattern's equals / contains to a snapshot value.
func fieldMatches(v any, p Pattern) bool {
	if p.Field == "" {
		return true
	}
	if v == nil {
		return false
	}
	if p.Equals != nil && !sameJSON(v, p.Equals) && !strings.EqualFold(schema.ValueText(v), schema.ValueText(p.Equals)) {
		return false
	}
	if p.Contains != "" && !strings.Contains(strings.ToLower(schema.ValueText(v)), strings.ToLower(p.Contains)) {
		return false
	}
	return true
}

// matchEdges keeps the candidates that satisfy the pattern's relationship
// part and appends them with the edges that did.
func (s *Service) matchEdges(ctx context.Context, tx *graph.Tx, c Caller, types []string, cands []graph.Entity, p Pattern, out *[]PatternMatch) error {
	if p.RelationshipType == "" && p.NeighborType == "" {
		for _, e := range cands {
			*out = append(*out, PatternMatch{Entity: e})
		}
		return nil
	}
	if len(cands) == 0 {
		return nil
	}
	ids := make([]string, len(cands))
	for i, e := range cands {
		ids[i] = e.ID
	}
	q := graph.EdgeQuery{UserID: c.UserID, EntityIDs: ids, Direction: p.Direction}
	if p.RelationshipType != "" {
		q.Types = []string{p.RelationshipType}
	}
	edges, err := tx.Edges(ctx, q)
	if err != nil {
		return err
	}
	allowed := func(t string) bool { return types == nil || slices.Contains(types, t) }
	byEntity := map[string][]graph.Edge{}
	add := func(from, neighborType string, e graph.Edge) {
		if allowed(neighborType) && (p.NeighborType == "" || neighborType == p.NeighborType) {
			byEntity[from] = append(byEntity[from], e)
		}
	}
	for _, e := range edges {
		if p.Direction != graph.Inbound {
			add(e.SourceEntityID, e.TargetType, e)
		}
		if p.Direction != graph.Outbound {
			add(e.TargetEntityID, e.SourceType, e)
		}
	}
	for _, e := range cands {
		if edges := byEntity[e.ID]; len(edges) > 0 {
			*out = append(*out, PatternMatch{Entity: e, Edges: edges})
		}
	}
	return nil
}
