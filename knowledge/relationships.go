package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairnkg/cairn/graph"
)

// RelationshipRequest asks for a typed edge between two entities.
type RelationshipRequest struct {
	Type           string
	SourceEntityID string
	TargetEntityID string
	Metadata       map[string]any
}

// CreateRelationship creates a typed edge, or finds the live one with the
// same (type, source, target), and records an observation of its metadata.
// The relationship's metadata is then reduced from all its observations.
func (s *Service) CreateRelationship(ctx context.Context, c Caller, req RelationshipRequest) (rel graph.Relationship, created bool, err error) {
	if err := s.checkFieldSizes("metadata", req.Metadata); err != nil {
		return graph.Relationship{}, false, err
	}
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		rel, created, err = s.createRelationship(ctx, tx, c, req, graph.SourceRelationship, s.clock())
		return err
	})
	if err != nil {
		return graph.Relationship{}, false, fmt.Errorf("knowledge: create relationship: %w", err)
	}
	return rel, created, nil
}

// MaxRelationshipsPerCall bounds one CreateRelationships call.
const MaxRelationshipsPerCall = 1000

// RelationshipResult is the outcome of one request of CreateRelationships.
type RelationshipResult struct {
	Relationship graph.Relationship
	Created      bool
	// Err is why this request wrote nothing: what CreateRelationship would
	// have returned for it alone (a *ValidationError, *NotFoundError,
	// *RelationshipTypeError or *graph.CycleError).
	Err error
}

// CreateRelationships creates many relationships in one transaction, each
// as CreateRelationship would and in order, so that each sees the ones
// before it: a repeat of an earlier request finds its edge, and an edge
// that would close a cycle with earlier ones of the same call is refused.
// The transaction holds the user's lock (see graph.Tx.CreateRelationship)
// from the first request to the commit, so concurrent writers cannot build
// a cycle with the batch either.
//
// A request that fails has its own Err in the result, in the request's
// place, and the others are still written. An error that is not about one
// request (the store failing) fails the call and writes nothing.
func (s *Service) CreateRelationships(ctx context.Context, c Caller, reqs []RelationshipRequest) ([]RelationshipResult, error) {
	if len(reqs) == 0 || len(reqs) > MaxRelationshipsPerCall {
		return nil, invalid("relationships", fmt.Sprintf("1..%d relationships", MaxRelationshipsPerCall), fmt.Sprintf("%d", len(reqs)),
			"send between 1 and %d relationships in one call", MaxRelationshipsPerCall)
	}
	checked := make([]error, len(reqs))
	for i, req := range reqs {
		checked[i] = s.checkFieldSizes("metadata", req.Metadata)
	}
	var out []RelationshipResult
	var endpoints []string
	for i, req := range reqs {
		if checked[i] == nil {
			endpoints = append(endpoints, req.SourceEntityID, req.TargetEntityID)
		}
	}
	slices.Sort(endpoints)
	endpoints = slices.Compact(endpoints)
	err := s.graph.Update(ctx, func(tx *graph.Tx) error {
		out = make([]RelationshipResult, len(reqs)) // fn may be run again
		now := s.clock()
		// Every relationship reads both endpoints twice (consent, then
		// resolving merges): one read of them all serves every request.
		if err := tx.PrefetchEntities(ctx, c.UserID, endpoints); err != nil {
			return err
		}
		for i, req := range reqs {
			if checked[i] != nil {
				out[i].Err = checked[i]
				continue
			}
			rel, created, err := s.createRelationship(ctx, tx, c, req, graph.SourceRelationship, now)
			if err != nil && !isRequestError(err) {
				return err
			}
			out[i] = RelationshipResult{Relationship: rel, Created: created, Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: create relationships: %w", err)
	}
	return out, nil
}

// isRequestError reports whether err is about a relationship request
// itself, as createRelationship returns it before writing anything, rather
// than about the store.
func isRequestError(err error) bool {
	var (
		verr  *ValidationError
		nf    *NotFoundError
		typ   *RelationshipTypeError
		cycle *graph.CycleError
	)
	return errors.As(err, &verr) || errors.As(err, &nf) || errors.As(err, &typ) || errors.As(err, &cycle) ||
		errors.Is(err, graph.ErrInvalidRelationshipType)
}

// addRelationship is createRelationship for callers that do not care
// whether the edge is new.
func (s *Service) addRelationship(ctx context.Context, tx *graph.Tx, c Caller, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, error) {
	rel, _, err := s.createRelationship(ctx, tx, c, req, kind, now)
	return rel, err
}

// createRelationship returns every error about the request (see
// isRequestError) before it writes anything, so that CreateRelationships
// can report it and go on in the same transaction.
func (s *Service) createRelationship(ctx context.Context, tx *graph.Tx, c Caller, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, bool, error) {
	relType, err := s.relationshipType(ctx, c.UserID, req.Type)
	if err != nil {
		return graph.Relationship{}, false, err
	}
	for _, id := range []struct{ field, id string }{{"source_entity_id", req.SourceEntityID}, {"target_entity_id", req.TargetEntityID}} {
		if err := checkID(id.field, id.id); err != nil {
			return graph.Relationship{}, false, err
		}
		if _, err := s.readableEntity(ctx, tx, c, id.id, true); err != nil {
			return graph.Relationship{}, false, err
		}
	}
	rel, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{
		UserID: c.UserID, Type: req.Type, SourceEntityID: req.SourceEntityID, TargetEntityID: req.TargetEntityID, Now: now,
		Acyclic: relType.Acyclic,
	})
	var nf *graph.NotFoundError
	if errors.As(err, &nf) {
		return graph.Relationship{}, false, &NotFoundError{Kind: ErrEntityNotFound, ID: nf.ID}
	}
	var cycle *graph.CycleError
	if errors.As(err, &cycle) {
		// The edge is refused whatever the caller may read, but the path
		// is graph data and may cross entities it may not read.
		if ok, rerr := s.mayReadPath(ctx, tx, c, cycle.Path); rerr != nil || !ok {
			return graph.Relationship{}, false, cmp.Or(rerr, error(&graph.CycleError{RelationshipType: cycle.RelationshipType}))
		}
	}
	if err != nil {
		return graph.Relationship{}, false, err
	}
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	content, err := canonicalJSON(map[string]any{
		"relationship_type": req.Type, "source_entity_id": rel.SourceEntityID, "target_entity_id": rel.TargetEntityID, "metadata": meta,
	})
	if err != nil {
		return graph.Relationship{}, false, err
	}
	src, err := s.ensureSource(ctx, tx, c, kind, content, now)
	if err != nil {
		return graph.Relationship{}, false, err
	}
	o := graph.RelationshipObservation{
		ID: hashID("robs_", rel.ID, src.ID, now.Format(time.RFC3339Nano)), UserID: c.UserID, RelationshipID: rel.ID,
		SourceID: src.ID, ObservedAt: now, CreatedAt: now, SourcePriority: DefaultSourcePriority, Metadata: meta,
	}
	if err := tx.InsertRelationshipObservation(ctx, o); err != nil && !errors.Is(err, graph.ErrConflict) {
		return graph.Relationship{}, false, err
	}
	if created && rel.ObservationCount == 0 {
		// A relationship that never existed has no observation but this
		// one: reduce it without reading it back.
		rel, err = reduceRelationshipWith(ctx, tx, rel, []graph.RelationshipObservation{o})
	} else {
		rel, err = s.reduceRelationship(ctx, tx, rel)
	}
	if err != nil {
		return graph.Relationship{}, false, err
	}
	return rel, created, nil
}

// mayReadPath reports whether the caller may see a path: it may read the
// graph and every entity on the path.
func (s *Service) mayReadPath(ctx context.Context, tx *graph.Tx, c Caller, path []string) (bool, error) {
	if !c.May(Read, ResourceGraph) {
		return false, nil
	}
	ents, err := tx.Entities(ctx, c.UserID, path)
	if err != nil {
		return false, err
	}
	if len(ents) != len(path) {
		return false, nil
	}
	for _, e := range ents {
		if !c.readable(e.Type) {
			return false, nil
		}
	}
	return true, nil
}

// reduceRelationship recomputes a relationship's metadata from all its
// observations, with the same reducer as entities (every field last_write).
func (s *Service) reduceRelationship(ctx context.Context, tx *graph.Tx, rel graph.Relationship) (graph.Relationship, error) {
	robs, err := tx.RelationshipObservations(ctx, rel.UserID, rel.ID)
	if err != nil {
		return graph.Relationship{}, err
	}
	return reduceRelationshipWith(ctx, tx, rel, robs)
}

// reduceRelationshipWith sets a relationship's metadata from robs, which
// must be all its observations, and writes it.
func reduceRelationshipWith(ctx context.Context, tx *graph.Tx, rel graph.Relationship, robs []graph.RelationshipObservation) (graph.Relationship, error) {
	red := Reduce(&Schema{Fields: map[string]Field{}}, asObservations(robs))
	rel.Metadata, rel.Provenance, rel.ObservationCount = red.Snapshot, red.Provenance, red.ObservationCount
	if red.LastObservationAt.After(rel.LastObservationAt) {
		rel.LastObservationAt = red.LastObservationAt
	}
	return rel, tx.PutRelationship(ctx, rel)
}

func asObservations(robs []graph.RelationshipObservation) []graph.Observation {
	out := make([]graph.Observation, len(robs))
	for i, o := range robs {
		out[i] = graph.Observation{
			ID: o.ID, UserID: o.UserID, SourceID: o.SourceID, ObservedAt: o.ObservedAt, CreatedAt: o.CreatedAt,
			SpecificityScore: o.SpecificityScore, SourcePriority: o.SourcePriority, Fields: o.Metadata,
		}
	}
	return out
}

// ensureSource returns the user's source with this content, creating it.
func (s *Service) ensureSource(ctx context.Context, tx *graph.Tx, c Caller, kind string, content []byte, now time.Time) (graph.Source, error) {
	hash := sha256Hex(content)
	src, err := tx.SourceByHash(ctx, c.UserID, hash)
	if err == nil {
		return src, nil
	}
	if !errors.Is(err, graph.ErrNotFound) {
		return graph.Source{}, err
	}
	src = graph.Source{
		ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: kind, MimeType: "application/json",
		Size: int64(len(content)), Provenance: sourceProvenance(nil, c.AgentID), CreatedAt: now,
	}
	return src, tx.InsertSource(ctx, src)
}

// relationshipType returns a relationship type the user's schemas know
// (built in or registered), or a *RelationshipTypeError listing those
// they know.
func (s *Service) relationshipType(ctx context.Context, userID, t string) (RelationshipType, error) {
	set, err := s.schemas.For(ctx, userID)
	if err != nil {
		return RelationshipType{}, err
	}
	if graph.ValidRelationshipTypeName(t) {
		if rt, ok := set.RelationshipType(t, graph.IsBuiltinRelationshipType, graph.IsAcyclic); ok {
			return rt, nil
		}
	}
	known := append([]string(nil), graph.BuiltinRelationshipTypes...)
	for _, sc := range set.All() {
		for _, rt := range sc.RelationshipTypes {
			if !slices.Contains(known, rt.Name) {
				known = append(known, rt.Name)
			}
		}
	}
	return RelationshipType{}, &RelationshipTypeError{Type: t, Known: known}
}

// RelationshipTypeError reports an unknown relationship type and the known
// ones.
type RelationshipTypeError struct {
	Type  string
	Known []string
}

func (e *RelationshipTypeError) Error() string {
	return fmt.Sprintf("unknown relationship type %q", truncate(e.Type, 64))
}

// Unwrap makes errors.Is(err, ErrInvalidRelationshipType) true.
func (e *RelationshipTypeError) Unwrap() error { return ErrInvalidRelationshipType }
