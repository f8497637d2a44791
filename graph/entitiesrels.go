package graph

import "context"

// EntitiesRelationshipsQuery asks for the first relationships of several
// entities at once, as a store answer lists them (RelationshipsOfEntities).
type EntitiesRelationshipsQuery struct {
	UserID    string
	EntityIDs []string
	// EntityTypes, when non-nil, drops the edges of an entity whose other
	// endpoint is not of one of these types (consent filtering).
	EntityTypes []string
	// PerEntity caps the relationships listed for each entity (at least 1).
	PerEntity int
	// Limit caps the answer (at least 1).
	Limit int
}

// EntitiesRelationshipsLister is an optional capability of a DriverTx: it
// answers Tx.RelationshipsOfEntities in a bounded number of statements,
// where the portable one runs a ListRelationships per entity (a round trip
// each on a networked backend).
type EntitiesRelationshipsLister interface {
	// RelationshipsOfEntities returns exactly what Tx.RelationshipsOfEntitiesByEntity
	// returns for q.
	RelationshipsOfEntities(ctx context.Context, q EntitiesRelationshipsQuery) ([]Relationship, error)
}

// RelationshipsOfEntities returns, for each of q.EntityIDs in order, the
// first q.PerEntity live relationships of that entity that ListRelationships
// lists (both directions, newest first, then by id; with q.EntityTypes),
// one after the other, and of that sequence the first q.Limit. A
// relationship between two of the entities comes once under each (a
// relationship from an entity to itself once); the caller removes the
// repeats. It uses the driver's EntitiesRelationshipsLister when it has one.
func (t *Tx) RelationshipsOfEntities(ctx context.Context, q EntitiesRelationshipsQuery) ([]Relationship, error) {
	if l, ok := t.DriverTx.(EntitiesRelationshipsLister); ok {
		return l.RelationshipsOfEntities(ctx, q)
	}
	return t.RelationshipsOfEntitiesByEntity(ctx, q)
}

// RelationshipsOfEntitiesByEntity is the portable RelationshipsOfEntities:
// one ListRelationships for each entity, until the answer has q.Limit
// relationships. It is the oracle EntitiesRelationshipsLister is held to.
func (t *Tx) RelationshipsOfEntitiesByEntity(ctx context.Context, q EntitiesRelationshipsQuery) ([]Relationship, error) {
	perEntity, limit := max(q.PerEntity, 1), max(q.Limit, 1)
	out := []Relationship{}
	for _, id := range q.EntityIDs {
		if len(out) >= limit {
			break
		}
		rels, _, err := t.ListRelationships(ctx, RelationshipFilter{
			UserID: q.UserID, EntityID: id, EntityTypes: q.EntityTypes, Page: Page{Limit: perEntity},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, rels[:min(len(rels), limit-len(out))]...)
	}
	return out, nil
}
