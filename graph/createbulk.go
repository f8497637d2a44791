package graph

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"
)

// CreatedRelationship is the outcome of one NewRelationship of
// CreateRelationships.
type CreatedRelationship struct {
	Relationship Relationship
	Created      bool
	// Err is why nothing was created for this one: what CreateRelationship
	// would have returned for it (an error wrapping
	// ErrInvalidRelationshipType, a *NotFoundError or a *CycleError).
	Err error
}

// CreateRelationships does what CreateRelationship does for each of ins, in
// order, so that each sees the edges of the ones before it, and returns each
// one's outcome in its place. An error about one of them (see
// CreatedRelationship.Err) is that one's; any other error fails the call,
// and the caller must not commit.
//
// Edges of an acyclic type are created one at a time, in order, since each
// cycle check must see the edges of its type created before it. The others
// are created together, in a fixed number of statements however many there
// are: one read of every relationship they name (Relationships) and one
// write of the new periods (PutRelationships). Since edges of one type never
// affect a cycle check of another, and a relationship's id names its type,
// the two groups cannot see each other's edges, and creating them apart
// gives every answer that creating them all in order would.
func (tx *Tx) CreateRelationships(ctx context.Context, ins []NewRelationship) ([]CreatedRelationship, error) {
	out, writes, err := tx.prepareRelationships(ctx, ins)
	if err != nil {
		return nil, err
	}
	if err := tx.PutRelationships(ctx, writes); err != nil {
		return nil, err
	}
	return out, nil
}

// PrepareRelationships is CreateRelationships without its last write: the
// new periods of the relationships of types that are not acyclic are
// returned (Created) but not stored, and the caller must store each with
// PutRelationships before the transaction commits, as it is or with its
// metadata reduced, so that each is written once. Relationships of
// acyclic types are stored as CreateRelationships stores them, since the
// cycle checks of the later ones must see them.
func (tx *Tx) PrepareRelationships(ctx context.Context, ins []NewRelationship) ([]CreatedRelationship, error) {
	out, _, err := tx.prepareRelationships(ctx, ins)
	return out, err
}

// prefetchEndpoints locks the user of each of ins[which] and reads every
// endpoint not read yet, in one query per user (PrefetchEntities); merged
// endpoints (rare) are then followed one at a time by ResolveEntity.
func (tx *Tx) prefetchEndpoints(ctx context.Context, ins []NewRelationship, which []int) error {
	endpoints := map[string][]string{}
	var users []string
	for _, i := range which {
		in := ins[i]
		if !slices.Contains(users, in.UserID) {
			users = append(users, in.UserID)
			if err := tx.LockUser(ctx, in.UserID); err != nil {
				return err
			}
		}
		for _, id := range []string{in.SourceEntityID, in.TargetEntityID} {
			if _, ok := tx.read[entityKey{in.UserID, id}]; !ok {
				endpoints[in.UserID] = append(endpoints[in.UserID], id)
			}
		}
	}
	for _, u := range users {
		if len(endpoints[u]) > 0 {
			if err := tx.PrefetchEntities(ctx, u, endpoints[u]); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefetchAcyclic reads, in one query per user, the relationships that
// ins[which] would create, as their endpoints resolve now, so that
// CreateRelationship finds whether each exists without a query of its own.
// An edge whose endpoint is missing, or whose type is malformed, is left
// for CreateRelationship to report.
func (tx *Tx) prefetchAcyclic(ctx context.Context, ins []NewRelationship, which []int) error {
	ids := map[string][]string{}
	for _, i := range which {
		in := ins[i]
		if !ValidRelationshipTypeName(in.Type) {
			continue
		}
		src, err := tx.ResolveEntity(ctx, in.UserID, in.SourceEntityID)
		if err != nil {
			continue
		}
		dst, err := tx.ResolveEntity(ctx, in.UserID, in.TargetEntityID)
		if err != nil {
			continue
		}
		ids[in.UserID] = append(ids[in.UserID], RelationshipID(in.Type, src.ID, dst.ID))
	}
	for _, u := range slices.Sorted(maps.Keys(ids)) {
		if err := tx.prefetchRelationships(ctx, u, ids[u]); err != nil {
			return err
		}
	}
	return nil
}

// prepareRelationships is CreateRelationships, returning the new periods
// it would write in one statement rather than writing them.
func (tx *Tx) prepareRelationships(ctx context.Context, ins []NewRelationship) ([]CreatedRelationship, []Relationship, error) {
	out := make([]CreatedRelationship, len(ins))
	var bulk, acyclic []int
	for i, in := range ins {
		if ValidRelationshipTypeName(in.Type) && !IsAcyclic(in.Type) && !in.Acyclic {
			bulk = append(bulk, i)
		} else {
			acyclic = append(acyclic, i)
		}
	}
	// The acyclic ones are created one at a time, each resolving both its
	// endpoints: read them all first, one query per user, so that a chain
	// of a thousand edges costs one read of its entities, not two thousand.
	if err := tx.prefetchEndpoints(ctx, ins, acyclic); err != nil {
		return nil, nil, err
	}
	if err := tx.prefetchAcyclic(ctx, ins, acyclic); err != nil {
		return nil, nil, err
	}
	for _, i := range acyclic {
		in := ins[i]
		rel, created, err := tx.CreateRelationship(ctx, in)
		if err != nil && !isCreateError(err) {
			return nil, nil, err
		}
		out[i] = CreatedRelationship{Relationship: rel, Created: created, Err: err}
	}
	if len(bulk) == 0 {
		return out, nil, nil
	}

	if err := tx.prefetchEndpoints(ctx, ins, bulk); err != nil {
		return nil, nil, err
	}
	type resolved struct{ src, dst Entity }
	ends := make(map[int]resolved, len(bulk))
	relIDs := map[string][]string{}
	for _, i := range bulk {
		in := ins[i]
		src, err := tx.ResolveEntity(ctx, in.UserID, in.SourceEntityID)
		if err != nil {
			out[i].Err = endpointErr(err, in.SourceEntityID)
		} else {
			var dst Entity
			dst, err = tx.ResolveEntity(ctx, in.UserID, in.TargetEntityID)
			if err != nil {
				out[i].Err = endpointErr(err, in.TargetEntityID)
			}
			ends[i] = resolved{src, dst}
		}
		if err != nil {
			if !isCreateError(out[i].Err) {
				return nil, nil, out[i].Err
			}
			continue
		}
		relIDs[in.UserID] = append(relIDs[in.UserID], RelationshipID(in.Type, ends[i].src.ID, ends[i].dst.ID))
	}

	type relKey struct{ user, id string }
	current := map[relKey]Relationship{}
	for _, u := range slices.Sorted(maps.Keys(relIDs)) {
		rels, err := tx.Relationships(ctx, u, relIDs[u])
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rels {
			current[relKey{u, r.ID}] = r
		}
	}
	var writes []Relationship
	for _, i := range bulk {
		if out[i].Err != nil {
			continue
		}
		in, e := ins[i], ends[i]
		key := relKey{in.UserID, RelationshipID(in.Type, e.src.ID, e.dst.ID)}
		existing, found := current[key]
		if found && existing.EndedAt.IsZero() {
			out[i].Relationship = cloneRelationship(existing)
			continue
		}
		now := in.Now
		if now.IsZero() {
			now = Now()
		}
		if found && !now.After(existing.CreatedAt) {
			now = existing.CreatedAt.Add(time.Microsecond)
		}
		rel := Relationship{
			ID: key.id, UserID: in.UserID, Type: in.Type,
			SourceEntityID: e.src.ID, TargetEntityID: e.dst.ID,
			Metadata: map[string]any{}, Provenance: map[string]string{},
			CreatedAt: now, LastObservationAt: now,
		}
		if found {
			rel.Metadata, rel.Provenance, rel.ObservationCount = existing.Metadata, existing.Provenance, existing.ObservationCount
		}
		current[key] = rel
		writes = append(writes, rel)
		out[i] = CreatedRelationship{Relationship: cloneRelationship(rel), Created: true}
	}
	return out, writes, nil
}

// isCreateError reports whether err is about one NewRelationship, as
// CreateRelationship returns it, rather than about the store.
func isCreateError(err error) bool {
	var (
		nf    *NotFoundError
		cycle *CycleError
	)
	return errors.Is(err, ErrInvalidRelationshipType) || errors.As(err, &nf) || errors.As(err, &cycle)
}

// cloneRelationship returns r with maps of its own, so that the outcomes of
// one relationship named twice do not share them.
func cloneRelationship(r Relationship) Relationship {
	r.Metadata, r.Provenance = maps.Clone(r.Metadata), maps.Clone(r.Provenance)
	return r
}
