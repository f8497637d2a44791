package graph

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// NewRelationship asks CreateRelationship for an edge.
type NewRelationship struct {
	UserID         string
	Type           string
	SourceEntityID string
	TargetEntityID string
	// Now is the creation time recorded if the edge is new; zero means Now().
	Now time.Time
	// Acyclic makes edges of the type acyclic as the built-in acyclic
	// types are (IsAcyclic): a type a schema registers declares it.
	Acyclic bool
}

// CreateRelationship creates the edge unless it is already live, and returns
// it with created reporting whether it is new. An ended relationship created
// again starts a new period and keeps its metadata, provenance and
// observation count; a relationship that never existed has an
// ObservationCount of 0. Endpoints that were merged
// resolve to the entity they were merged into, so the edge lands where the
// data now lives.
//
// It returns ErrInvalidRelationshipType for a malformed type name (whether
// the name is known is the caller's check), a *NotFoundError for a missing
// endpoint, and a *CycleError when the type is acyclic and the edge is a
// self-loop or would close a cycle. The check and the insert happen under
// LockUser, so concurrent writers cannot together build a cycle that each
// alone would not.
func (tx *Tx) CreateRelationship(ctx context.Context, in NewRelationship) (rel Relationship, created bool, err error) {
	if !ValidRelationshipTypeName(in.Type) {
		return Relationship{}, false, fmt.Errorf("%w: %q", ErrInvalidRelationshipType, in.Type)
	}
	if err := tx.LockUser(ctx, in.UserID); err != nil {
		return Relationship{}, false, err
	}
	src, err := tx.ResolveEntity(ctx, in.UserID, in.SourceEntityID)
	if err != nil {
		return Relationship{}, false, endpointErr(err, in.SourceEntityID)
	}
	dst, err := tx.ResolveEntity(ctx, in.UserID, in.TargetEntityID)
	if err != nil {
		return Relationship{}, false, endpointErr(err, in.TargetEntityID)
	}
	if IsAcyclic(in.Type) || in.Acyclic {
		if src.ID == dst.ID {
			return Relationship{}, false, &CycleError{RelationshipType: in.Type, Path: []string{src.ID}}
		}
		path, err := tx.reach(ctx, PathQuery{
			UserID: in.UserID, From: dst.ID, To: src.ID, Types: []string{in.Type}, Direction: Outbound,
		})
		if err != nil {
			return Relationship{}, false, err
		}
		if path != nil {
			return Relationship{}, false, &CycleError{RelationshipType: in.Type, Path: path}
		}
	}
	id := RelationshipID(in.Type, src.ID, dst.ID)
	existing, err := tx.relationshipOfType(ctx, in.UserID, in.Type, id)
	switch {
	case err == nil && existing.EndedAt.IsZero():
		return existing, false, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return Relationship{}, false, err
	}
	now := in.Now
	if now.IsZero() {
		now = Now()
	}
	if err == nil && !now.After(existing.CreatedAt) {
		// A new period must start after the last one began.
		now = existing.CreatedAt.Add(time.Microsecond)
	}
	rel = Relationship{
		ID: id, UserID: in.UserID, Type: in.Type,
		SourceEntityID: src.ID, TargetEntityID: dst.ID,
		Metadata: map[string]any{}, Provenance: map[string]string{},
		CreatedAt: now, LastObservationAt: now,
	}
	if err == nil {
		// A new period of an ended relationship keeps what its earlier
		// observations merged to, and says how many there were: only a
		// relationship with none has nothing to merge.
		rel.Metadata, rel.Provenance, rel.ObservationCount = existing.Metadata, existing.Provenance, existing.ObservationCount
	}
	if err := tx.PutRelationship(ctx, rel); err != nil {
		return Relationship{}, false, err
	}
	return rel, true, nil
}

// relationshipOfType reads the relationship id of type typ: from what
// prefetchRelationships read when it holds id, else with the driver's
// TypedRelationshipGetter when it has one, and with Relationship
// otherwise; all give the same answer.
func (tx *Tx) relationshipOfType(ctx context.Context, userID, typ, id string) (Relationship, error) {
	if r, ok, err := tx.knownRelationshipOf(userID, id); ok {
		return r, err
	}
	if g, ok := tx.DriverTx.(TypedRelationshipGetter); ok {
		return g.RelationshipOfType(ctx, userID, typ, id)
	}
	return tx.Relationship(ctx, userID, id)
}

// reach answers a path query with the driver's Reacher when it has one, and
// with ShortestPath otherwise; both give the same path.
func (tx *Tx) reach(ctx context.Context, q PathQuery) ([]string, error) {
	if r, ok := tx.DriverTx.(Reacher); ok {
		return r.Reach(ctx, q)
	}
	return tx.ShortestPath(ctx, q)
}

// EndRelationship marks the live period of a relationship as ended at the
// given time (zero: now). It returns a *NotFoundError when the relationship
// does not exist or is not live.
func (tx *Tx) EndRelationship(ctx context.Context, userID, id string, at time.Time) (Relationship, error) {
	rel, err := tx.Relationship(ctx, userID, id)
	if err != nil {
		return Relationship{}, err
	}
	if !rel.EndedAt.IsZero() {
		return Relationship{}, &NotFoundError{What: "relationship", ID: id}
	}
	if at.IsZero() {
		at = Now()
	}
	if !at.After(rel.CreatedAt) {
		at = rel.CreatedAt.Add(time.Microsecond)
	}
	rel.EndedAt = at
	if err := tx.PutRelationship(ctx, rel); err != nil {
		return Relationship{}, err
	}
	return rel, nil
}

// endpointErr names the endpoint the caller asked for in a not-found error.
func endpointErr(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return &NotFoundError{What: "entity", ID: id}
	}
	return err
}
