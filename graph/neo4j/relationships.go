package neo4j

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	relationshipPut         = cypher.Must("relationship_put")
	relationshipGet         = cypher.Must("relationship_get")
	relationshipGetTyped    = cypher.Must("relationship_get_typed")
	relationshipsList       = cypher.Must("relationships_list")
	relationshipsOfEntity   = cypher.Must("relationships_of_entity")
	relationshipsOfEntities = cypher.Must("relationships_of_entities")
	edgesStatement          = cypher.Must("edges")
	traverseEdges           = cypher.Must("traverse_edges")
	relObservationInsert    = cypher.Must("relationship_observation_insert")
	relationshipObsListing  = cypher.Must("relationship_observations")
	relationshipObsBySource = cypher.Must("relationship_observations_by_source")
)

// relationshipProps are the properties relationship_put sets itself.
var relationshipProps = map[string]bool{
	"id": true, "user_id": true, "created_at": true, "metadata_json": true, "provenance_json": true,
	"observation_count": true, "last_observation_at": true, "ended_at": true,
}

// relationshipParams are the parameters of relationship_put for r.
func relationshipParams(r graph.Relationship) (map[string]any, error) {
	meta, err := encodeJSON(r.Metadata)
	if err != nil {
		return nil, err
	}
	prov, err := encodeJSON(r.Provenance)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"id": r.ID, "userId": r.UserID, "sourceEntityId": r.SourceEntityID, "targetEntityId": r.TargetEntityID,
		"createdAt": r.CreatedAt.UTC(), "metadataJson": meta, "provenanceJson": prov,
		"metadataProps":    storableProps(r.Metadata, relationshipProps),
		"observationCount": int64(r.ObservationCount), "lastObservationAt": r.LastObservationAt.UTC(),
		"endedAt": nullTime(r.EndedAt),
	}, nil
}

// PutRelationship implements graph.DriverTx: the period is a native Neo4j
// relationship of type r.Type (checked by cypher.RelType) between the two
// entities; no row back means an endpoint is not an entity of the user.
func (t *tx) PutRelationship(ctx context.Context, r graph.Relationship) error {
	if err := t.enter(ctx, r.UserID); err != nil {
		return err
	}
	if _, err := cypher.RelType(r.Type); err != nil {
		return fmt.Errorf("graph/neo4j: put relationship %s: %w: %w", r.ID, graph.ErrInvalidRelationshipType, err)
	}
	params, err := relationshipParams(r)
	if err != nil {
		return err
	}
	params["userWrite"] = t.userWrites[r.UserID]
	rows, err := t.run(ctx, relationshipPut, cypher.Fill{RelType: r.Type}, params)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("graph/neo4j: put relationship %s: an endpoint is not an entity of the user: %w", r.ID, graph.ErrNotFound)
	}
	return nil
}

// Relationship implements graph.DriverTx. An id does not say its type, so
// relationship_get reads the user's relationships by id property.
func (t *tx) Relationship(ctx context.Context, userID, id string) (graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Relationship{}, err
	}
	return t.oneRelationship(ctx, relationshipGet, cypher.Fill{}, userID, id)
}

// oneRelationship runs a lookup of relationship id (relationship_get or
// relationship_get_typed) and returns its one row, or a *NotFoundError.
func (t *tx) oneRelationship(ctx context.Context, s cypher.Statement, f cypher.Fill, userID, id string) (graph.Relationship, error) {
	rows, err := t.run(ctx, s, f, map[string]any{"userId": userID, "id": id})
	if err != nil {
		return graph.Relationship{}, err
	}
	out, err := mapRows(rows, "relationship", toRelationship)
	if err != nil {
		return graph.Relationship{}, err
	}
	if len(out) == 0 {
		return graph.Relationship{}, notFound("relationship", id)
	}
	return out[0], nil
}

// RelationshipOfType implements graph.TypedRelationshipGetter with
// relationship_get_typed, which the per-type index on id serves, where
// relationship_get, not knowing the type, reads the user's relationships.
func (t *tx) RelationshipOfType(ctx context.Context, userID, typ, id string) (graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Relationship{}, err
	}
	if !graph.ValidRelationshipTypeName(typ) {
		return graph.Relationship{}, notFound("relationship", id)
	}
	return t.oneRelationship(ctx, relationshipGetTyped, cypher.Fill{RelType: typ}, userID, id)
}

// relationshipFilterParams are the parameters of relationships_list, or of
// relationships_of_entity when f names an entity, and which of them to run.
func relationshipFilterParams(f graph.RelationshipFilter) (cypher.Statement, map[string]any) {
	params := map[string]any{
		"userId": f.UserID, "at": nullTime(f.At), "type": nullString(f.Type),
		"entityTypes": nullList(f.EntityTypes),
		"offset":      int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100)),
	}
	if f.EntityID == "" {
		return relationshipsList, params
	}
	params["entityId"] = f.EntityID
	params["direction"] = direction(f.Direction)
	return relationshipsOfEntity, params
}

func (t *tx) ListRelationships(ctx context.Context, f graph.RelationshipFilter) ([]graph.Relationship, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.EntityTypes != nil && len(f.EntityTypes) == 0 {
		return []graph.Relationship{}, 0, nil
	}
	st, params := relationshipFilterParams(f)
	rows, err := t.run(ctx, st, cypher.Fill{}, params)
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, toRelationship)
}

// RelationshipsOfEntities implements graph.EntitiesRelationshipsLister: one
// statement (relationships_of_entities) for every entity of a store answer,
// where the portable one runs relationships_of_entity for each.
func (t *tx) RelationshipsOfEntities(ctx context.Context, q graph.EntitiesRelationshipsQuery) ([]graph.Relationship, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if len(q.EntityIDs) == 0 || (q.EntityTypes != nil && len(q.EntityTypes) == 0) {
		return []graph.Relationship{}, nil
	}
	rows, err := t.run(ctx, relationshipsOfEntities, cypher.Fill{}, map[string]any{
		"userId": q.UserID, "entityIds": q.EntityIDs, "entityTypes": nullList(q.EntityTypes),
		"perEntity": int64(max(q.PerEntity, 1)), "limit": int64(max(q.Limit, 1)),
	})
	if err != nil {
		return nil, err
	}
	return tupleList(rows, relationshipsOfEntities.Name(), "relationships", edgeColumns, toRelationship)
}

func (t *tx) Edges(ctx context.Context, q graph.EdgeQuery) ([]graph.Edge, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if len(q.EntityIDs) == 0 || (q.Types != nil && len(q.Types) == 0) {
		return []graph.Edge{}, nil
	}
	rows, err := t.run(ctx, edgesStatement, cypher.Fill{}, map[string]any{
		"userId": q.UserID, "entityIds": q.EntityIDs, "direction": direction(q.Direction),
		"types": nullList(q.Types), "at": nullTime(q.At),
	})
	if err != nil {
		return nil, err
	}
	out, err := tupleList(rows, edgesStatement.Name(), "relationships", edgeColumns, toEdge)
	if err != nil {
		return nil, err
	}
	// Sorted here, by id and period start, exactly whatever Neo4j's string
	// collation.
	graph.SortEdges(out)
	return out, nil
}

// ExpandEdges implements graph.Expander: the edges a traversal of q may
// follow, read in one statement (traverse_edges) that expands hop by hop
// inside Neo4j, where the portable traversal runs edges once a hop.
func (t *tx) ExpandEdges(ctx context.Context, q graph.TraverseQuery) ([]graph.Edge, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, traverseEdges, cypher.Fill{}, map[string]any{
		"userId": q.UserID, "start": q.Start, "direction": direction(q.Direction),
		"types": nullList(q.Types), "at": nullTime(q.At), "entityTypes": nullList(q.EntityTypes),
		"maxHops": int64(min(max(q.MaxHops, 1), graph.MaxHopsLimit)),
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 { // MATCH found no start
		return nil, notFound("entity", q.Start)
	}
	out, err := tupleList(rows, traverseEdges.Name(), "relationships", edgeColumns, toEdge)
	if err != nil {
		return nil, err
	}
	graph.SortEdges(out)
	return out, nil
}

func (t *tx) InsertRelationshipObservation(ctx context.Context, o graph.RelationshipObservation) error {
	if err := t.enter(ctx, o.UserID); err != nil {
		return err
	}
	meta, err := encodeJSON(o.Metadata)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, relObservationInsert, cypher.Fill{}, map[string]any{
		"id": o.ID, "userId": o.UserID, "relationshipId": o.RelationshipID, "sourceId": o.SourceID,
		"observedAt": o.ObservedAt.UTC(), "createdAt": o.CreatedAt.UTC(), "specificityScore": o.SpecificityScore,
		"sourcePriority": int64(o.SourcePriority), "metadataJson": meta,
	})
	if err != nil {
		return err
	}
	// No row back: the id exists or the source is not the user's.
	return t.insertedAll(ctx, len(rows), "relationship observation", o.UserID, []string{o.ID}, []string{o.SourceID})
}

// RelationshipObservationsBySource implements graph.DriverTx.
func (t *tx) RelationshipObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, relationshipObsBySource, cypher.Fill{}, map[string]any{"userId": userID, "sourceId": sourceID})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "observation", toRelationshipObservation)
}

func (t *tx) RelationshipObservations(ctx context.Context, userID, relID string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, relationshipObsListing, cypher.Fill{}, map[string]any{"userId": userID, "relationshipId": relID})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "observation", toRelationshipObservation)
}
