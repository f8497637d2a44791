package knowledge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/schema"
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
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return graph.Relationship{}, false, fmt.Errorf("knowledge: create relationship: %w", err)
	}
	if set, _, err = s.registerRelationshipTypes(ctx, c, set, []string{req.Type}); err != nil {
		return graph.Relationship{}, false, err
	}
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		rel, created, err = s.createRelationship(ctx, tx, c, set, req, graph.SourceRelationship, s.clock())
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
// a cycle with the batch either. Only the edges of acyclic types are
// created one after the other, each after its cycle check; everything else
// (the other edges, sources, observations, the reduced relationships) takes
// a fixed number of statements for the whole call
// (createRelationshipsTogether).
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
	// The schemas that define the relationship types, read once for the
	// call rather than once per request.
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, fmt.Errorf("knowledge: create relationships: %w", err)
	}
	types := make([]string, len(reqs))
	for i, req := range reqs {
		types[i] = req.Type
	}
	if set, _, err = s.registerRelationshipTypes(ctx, c, set, types); err != nil {
		return nil, err
	}
	err = s.graph.Update(ctx, func(tx *graph.Tx) error {
		out = make([]RelationshipResult, len(reqs)) // fn may be run again
		now := s.clock()
		// Every relationship reads both endpoints twice (consent, then
		// resolving merges): one read of them all serves every request.
		if err := tx.PrefetchEntities(ctx, c.UserID, endpoints); err != nil {
			return err
		}
		// Every request that passes its checks goes to
		// createRelationshipsTogether, in order; those of acyclic types
		// are created there one after the other (graph.Tx.
		// PrepareRelationships), so that each cycle check sees the edges
		// of its type made before it.
		var together []int
		acyclic := make([]bool, len(reqs))
		for i, req := range reqs {
			if checked[i] != nil {
				out[i].Err = checked[i]
				continue
			}
			relType, err := s.checkRelationshipRequest(ctx, tx, c, set, req)
			if err != nil {
				if !isRequestError(err) {
					return err
				}
				out[i].Err = err
				continue
			}
			together, acyclic[i] = append(together, i), relType.Acyclic
		}
		return s.createRelationshipsTogether(ctx, tx, c, reqs, acyclic, together, now, out)
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: create relationships: %w", err)
	}
	return out, nil
}

// createRelationshipsTogether creates the relationships of reqs[at] (which
// checkRelationshipRequest passed; acyclic[i] tells whether reqs[i]'s type
// is acyclic) and puts each one's result in out, as createRelationship one
// after the other would: graph.Tx.PrepareRelationships (a read of the
// relationships, and each edge of an acyclic type checked and created in
// order), one EnsureSources, a read of the earlier observations of the
// relationships that had some, one InsertRelationshipObservations and one
// PutRelationships of the reduced relationships, new periods included, so
// that each relationship of a type that is not acyclic is written once
// (those of acyclic types twice: the cycle checks of the later ones must
// see them).
//
// One by one, each request reduces its relationship from all of its
// observations, those of the earlier requests of the call included, and
// answers with what that gives; here the reductions run in memory, in the
// order of the requests, on the same observations. A relationship that
// never existed has no observation but the call's, as createRelationship
// assumes; the observations it reads back from the store, one by one,
// come back as the store decodes them (numbers as json.Number), and so
// they do here (storedObservation).
func (s *Service) createRelationshipsTogether(ctx context.Context, tx *graph.Tx, c Caller, reqs []RelationshipRequest, acyclic []bool, at []int, now time.Time, out []RelationshipResult) error {
	if len(at) == 0 {
		return nil
	}
	ins := make([]graph.NewRelationship, len(at))
	for k, i := range at {
		ins[k] = graph.NewRelationship{UserID: c.UserID, Type: reqs[i].Type, SourceEntityID: reqs[i].SourceEntityID,
			TargetEntityID: reqs[i].TargetEntityID, Now: now, Acyclic: acyclic[i]}
	}
	made, err := tx.PrepareRelationships(ctx, ins)
	if err != nil {
		return err
	}
	// ok are the requests that got a relationship, in order; metas, srcs
	// and obs are theirs.
	var (
		ok    []int
		metas []map[string]any
		srcs  []graph.Source
	)
	for k, i := range at {
		if err := s.createError(ctx, tx, c, made[k].Err); err != nil {
			if !isRequestError(err) {
				return err
			}
			out[i].Err = err
			continue
		}
		meta := reqs[i].Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		src, err := s.relationshipSource(c, graph.SourceRelationship, reqs[i].Type, made[k].Relationship, meta, now)
		if err != nil {
			return err
		}
		ok, metas, srcs = append(ok, k), append(metas, meta), append(srcs, src)
	}
	if len(ok) == 0 {
		return nil
	}
	if srcs, err = tx.EnsureSources(ctx, srcs); err != nil {
		return err
	}

	// The earlier observations of every relationship whose first request
	// does not reduce it in memory alone.
	first := map[string]bool{}
	var toRead []string
	for _, k := range ok {
		rel := made[k].Relationship
		if !first[rel.ID] {
			first[rel.ID] = true
			if !made[k].Created || rel.ObservationCount > 0 {
				toRead = append(toRead, rel.ID)
			}
		}
	}
	observed := map[string][]graph.RelationshipObservation{} // by relationship, as the store holds them
	stored := map[string]bool{}                              // observation ids
	if len(toRead) > 0 {
		earlier, err := tx.RelationshipsObservations(ctx, c.UserID, toRead)
		if err != nil {
			return err
		}
		for _, o := range earlier {
			stored[o.ID] = true
		}
		// Retracted observations stay stored and do not count.
		if earlier, err = s.countedRelationship(ctx, c.UserID, earlier); err != nil {
			return err
		}
		for _, o := range earlier {
			observed[o.RelationshipID] = append(observed[o.RelationshipID], o)
		}
	}

	// Reduce in the order of the requests; a relationship's later requests
	// start from what its earlier ones made of it. An observation that is
	// stored already (the same request again at the same time) is not
	// stored twice, as InsertRelationshipObservation's conflict is ignored
	// one by one.
	current := map[string]graph.Relationship{}
	var (
		inserts []graph.RelationshipObservation
		order   []string
	)
	for n, k := range ok {
		rel, seen := current[made[k].Relationship.ID]
		if !seen {
			rel = made[k].Relationship
			order = append(order, rel.ID)
		}
		o := relationshipObservation(c, rel, srcs[n], metas[n], now)
		var robs []graph.RelationshipObservation
		if !seen && made[k].Created && rel.ObservationCount == 0 {
			robs = []graph.RelationshipObservation{o}
		}
		if !stored[o.ID] {
			stored[o.ID] = true
			inserts = append(inserts, o)
			so, err := storedObservation(o)
			if err != nil {
				return err
			}
			observed[rel.ID] = append(observed[rel.ID], so)
		}
		if robs == nil {
			robs = observed[rel.ID]
		}
		rel = reducedRelationship(rel, robs)
		current[rel.ID] = rel
		out[at[k]] = RelationshipResult{Relationship: rel, Created: made[k].Created}
	}
	if err := tx.InsertRelationshipObservations(ctx, inserts); err != nil {
		return err
	}
	reduced := make([]graph.Relationship, len(order))
	for n, id := range order {
		reduced[n] = current[id]
	}
	return tx.PutRelationships(ctx, reduced)
}

// storedObservation is o as the store gives it back: its metadata through
// JSON, numbers as json.Number.
func storedObservation(o graph.RelationshipObservation) (graph.RelationshipObservation, error) {
	b, err := json.Marshal(o.Metadata)
	if err != nil {
		return o, fmt.Errorf("knowledge: encode relationship metadata: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	o.Metadata = map[string]any{}
	if err := dec.Decode(&o.Metadata); err != nil {
		return o, fmt.Errorf("knowledge: decode relationship metadata: %w", err)
	}
	return o, nil
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
func (s *Service) addRelationship(ctx context.Context, tx *graph.Tx, c Caller, set *schema.Set, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, error) {
	rel, _, err := s.createRelationship(ctx, tx, c, set, req, kind, now)
	return rel, err
}

// checkRelationshipRequest returns the request's type, or the error about
// the request that comes before the graph's: an unknown type, an empty or
// oversized id, an endpoint that is missing or that the caller may not
// read.
func (s *Service) checkRelationshipRequest(ctx context.Context, tx *graph.Tx, c Caller, set *schema.Set, req RelationshipRequest) (schema.RelationshipType, error) {
	relType, err := relationshipTypeIn(set, req.Type)
	if err != nil {
		return schema.RelationshipType{}, err
	}
	for _, id := range []struct{ field, id string }{{"source_entity_id", req.SourceEntityID}, {"target_entity_id", req.TargetEntityID}} {
		if err := checkID(id.field, id.id); err != nil {
			return schema.RelationshipType{}, err
		}
		if _, err := s.readableEntity(ctx, tx, c, id.id, true); err != nil {
			return schema.RelationshipType{}, err
		}
	}
	return relType, nil
}

// createRelationship creates one relationship, or finds the live one, and
// records the observation of its metadata. It returns every error about
// the request (see isRequestError) before it writes anything.
func (s *Service) createRelationship(ctx context.Context, tx *graph.Tx, c Caller, set *schema.Set, req RelationshipRequest, kind string, now time.Time) (graph.Relationship, bool, error) {
	relType, err := s.checkRelationshipRequest(ctx, tx, c, set, req)
	if err != nil {
		return graph.Relationship{}, false, err
	}
	rel, created, err := tx.CreateRelationship(ctx, graph.NewRelationship{
		UserID: c.UserID, Type: req.Type, SourceEntityID: req.SourceEntityID, TargetEntityID: req.TargetEntityID, Now: now,
		Acyclic: relType.Acyclic,
	})
	if err = s.createError(ctx, tx, c, err); err != nil {
		return graph.Relationship{}, false, err
	}
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	src, err := s.relationshipSource(c, kind, req.Type, rel, meta, now)
	if err != nil {
		return graph.Relationship{}, false, err
	}
	if src, err = s.ensureSource(ctx, tx, c, src); err != nil {
		return graph.Relationship{}, false, err
	}
	o := relationshipObservation(c, rel, src, meta, now)
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

// createError turns what graph.Tx.CreateRelationship returned about a
// request into the error the caller gets: a missing endpoint as this
// package's *NotFoundError, and a cycle without its path when the caller
// may not read it.
func (s *Service) createError(ctx context.Context, tx *graph.Tx, c Caller, err error) error {
	var nf *graph.NotFoundError
	if errors.As(err, &nf) {
		return &NotFoundError{Kind: ErrEntityNotFound, ID: nf.ID}
	}
	var cycle *graph.CycleError
	if errors.As(err, &cycle) {
		// The edge is refused whatever the caller may read, but the path
		// is graph data and may cross entities it may not read.
		if ok, rerr := s.mayReadPath(ctx, tx, c, cycle.Path); rerr != nil || !ok {
			return cmp.Or(rerr, error(&graph.CycleError{RelationshipType: cycle.RelationshipType}))
		}
	}
	return err
}

// relationshipSource is the source that records a relationship request:
// its content is the request with the endpoints it landed on.
func (s *Service) relationshipSource(c Caller, kind, relType string, rel graph.Relationship, meta map[string]any, now time.Time) (graph.Source, error) {
	content, err := canonicalJSON(map[string]any{
		"relationship_type": relType, "source_entity_id": rel.SourceEntityID, "target_entity_id": rel.TargetEntityID, "metadata": meta,
	})
	if err != nil {
		return graph.Source{}, err
	}
	hash := sha256Hex(content)
	return graph.Source{
		ID: SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, Kind: kind, MimeType: "application/json",
		Size: int64(len(content)), Provenance: sourceProvenance(nil, c.AgentID), CreatedAt: now,
	}, nil
}

// relationshipObservation is what src says about rel's metadata at now.
func relationshipObservation(c Caller, rel graph.Relationship, src graph.Source, meta map[string]any, now time.Time) graph.RelationshipObservation {
	return graph.RelationshipObservation{
		ID: relationshipObservationID(rel.ID, src.ID, now), UserID: c.UserID, RelationshipID: rel.ID,
		SourceID: src.ID, ObservedAt: now, CreatedAt: now, SourcePriority: DefaultSourcePriority, Metadata: meta,
	}
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
// observations that count (not retracted), with the same reducer as
// entities (every field last_write).
func (s *Service) reduceRelationship(ctx context.Context, tx *graph.Tx, rel graph.Relationship) (graph.Relationship, error) {
	robs, err := tx.RelationshipObservations(ctx, rel.UserID, rel.ID)
	if err != nil {
		return graph.Relationship{}, err
	}
	if robs, err = s.countedRelationship(ctx, rel.UserID, robs); err != nil {
		return graph.Relationship{}, err
	}
	return reduceRelationshipWith(ctx, tx, rel, robs)
}

// reduceRelationshipWith sets a relationship's metadata from robs, which
// must be all its observations, and writes it.
func reduceRelationshipWith(ctx context.Context, tx *graph.Tx, rel graph.Relationship, robs []graph.RelationshipObservation) (graph.Relationship, error) {
	rel = reducedRelationship(rel, robs)
	return rel, tx.PutRelationship(ctx, rel)
}

// reducedRelationship is rel with its metadata reduced from robs, which
// must be all its observations.
func reducedRelationship(rel graph.Relationship, robs []graph.RelationshipObservation) graph.Relationship {
	red := Reduce(&schema.Schema{Fields: map[string]schema.Field{}}, asObservations(robs))
	rel.Metadata, rel.Provenance, rel.ObservationCount = red.Snapshot, red.Provenance, red.ObservationCount
	if red.LastObservationAt.After(rel.LastObservationAt) {
		rel.LastObservationAt = red.LastObservationAt
	}
	return rel
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

// ensureSource returns the user's source with src's content hash, storing
// src when there is none.
func (s *Service) ensureSource(ctx context.Context, tx *graph.Tx, c Caller, src graph.Source) (graph.Source, error) {
	found, err := tx.SourceByHash(ctx, c.UserID, src.ContentHash)
	if err == nil {
		return found, nil
	}
	if !errors.Is(err, graph.ErrNotFound) {
		return graph.Source{}, err
	}
	return src, tx.InsertSource(ctx, src)
}

// relationshipType returns a relationship type the user knows (built in,
// registered by a schema, or by the user's use of it), or a
// *RelationshipTypeError listing those the user knows.
func (s *Service) relationshipType(ctx context.Context, userID, t string) (schema.RelationshipType, error) {
	set, err := s.schemas.For(ctx, userID)
	if err != nil {
		return schema.RelationshipType{}, err
	}
	if rt, err := relationshipTypeIn(set, t); err == nil || !graph.ValidRelationshipTypeName(t) {
		return rt, err
	}
	used, err := s.schemas.RelationshipTypes(ctx, userID)
	if err != nil {
		return schema.RelationshipType{}, err
	}
	return relationshipTypeIn(set.WithUsedRelationshipTypes(used...), t)
}

// RegisterRelationshipTypes registers for the caller's user, on first use,
// each well-formed relationship type of types that is neither built in nor
// declared by a schema: such a type is the user's from then on, and not
// acyclic (a schema declares acyclic types). It returns the types it
// registered now; those known before, and malformed names (which creating
// an edge refuses), are left out. It needs write access to the graph.
func (s *Service) RegisterRelationshipTypes(ctx context.Context, c Caller, types []string) ([]string, error) {
	if err := c.need(Write, ResourceGraph); err != nil {
		return nil, err
	}
	set, err := s.schemas.For(ctx, c.UserID)
	if err != nil {
		return nil, err
	}
	_, created, err := s.registerRelationshipTypes(ctx, c, set, types)
	return created, err
}

// registerRelationshipTypes is RegisterRelationshipTypes on a resolved
// set; it returns the set knowing every type registered for the user.
func (s *Service) registerRelationshipTypes(ctx context.Context, c Caller, set *schema.Set, types []string) (*schema.Set, []string, error) {
	var unknown []string
	for _, t := range types {
		if _, err := relationshipTypeIn(set, t); err != nil && graph.ValidRelationshipTypeName(t) && !slices.Contains(unknown, t) {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) == 0 {
		return set, nil, nil
	}
	var created []string
	for _, t := range unknown {
		ok, err := s.schemas.RegisterRelationshipType(ctx, c.UserID, t, s.clock())
		if err != nil {
			return nil, nil, fmt.Errorf("knowledge: register relationship type %s: %w", t, err)
		}
		if ok {
			created = append(created, t)
		}
	}
	return set.WithUsedRelationshipTypes(unknown...), created, nil
}

// relationshipTypeIn is relationshipType with the user's schemas already
// resolved.
func relationshipTypeIn(set *schema.Set, t string) (schema.RelationshipType, error) {
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
	for _, t := range set.UsedRelationshipTypes() {
		if !slices.Contains(known, t) {
			known = append(known, t)
		}
	}
	return schema.RelationshipType{}, &RelationshipTypeError{Type: t, Known: known}
}

// RelationshipTypeError reports an unknown relationship type and the known
// ones.
type RelationshipTypeError struct {
	Type  string
	Known []string
}

func (e *RelationshipTypeError) Error() string {
	if !graph.ValidRelationshipTypeName(e.Type) {
		// Any well-formed name is the user's on first use: what is
		// refused is the name itself.
		return fmt.Sprintf("relationship type %q is not a valid name: upper-case letters, digits and underscores, starting with a letter, "+
			"at most 64 characters, and not one of Cairn's own (PRODUCED, OBSERVES, IDENTIFIED_BY, HAS_EVENT)", truncate(e.Type, 64))
	}
	return fmt.Sprintf("unknown relationship type %q", truncate(e.Type, 64))
}

// Unwrap makes errors.Is(err, ErrInvalidRelationshipType) true.
func (e *RelationshipTypeError) Unwrap() error { return ErrInvalidRelationshipType }
