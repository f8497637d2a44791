package neo4j

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	sourceInsert         = cypher.Must("source_insert")
	sourceGet            = cypher.Must("source_get")
	sourceByHash         = cypher.Must("source_by_hash")
	entityPut            = cypher.Must("entity_put")
	entityLinkObs        = cypher.Must("entity_link_observations")
	entityGet            = cypher.Must("entity_get")
	entitiesGet          = cypher.Must("entities_get")
	entityCount          = cypher.Must("entity_count")
	entityList           = cypher.Must("entity_list")
	entityStatsList      = cypher.Must("entity_stats_list")
	identifiersClear     = cypher.Must("identifiers_clear")
	identifiersAdd       = cypher.Must("identifiers_add")
	entitiesByIdentifier = cypher.Must("entities_by_identifier")
	entityTypeCounts     = cypher.Must("entity_type_counts")
)

func (t *tx) InsertSource(ctx context.Context, s graph.Source) error {
	if err := t.enter(ctx, s.UserID); err != nil {
		return err
	}
	prov, err := encodeJSON(s.Provenance)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, sourceInsert, cypher.Fill{}, map[string]any{
		"id": s.ID, "userId": s.UserID, "contentHash": s.ContentHash, "kind": s.Kind, "mimeType": s.MimeType,
		"originalFilename": s.OriginalFilename, "size": s.Size, "provenanceJson": prov, "createdAt": s.CreatedAt.UTC(),
	})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return conflict("source", s.ID)
	}
	return nil
}

func (t *tx) Source(ctx context.Context, userID, id string) (graph.Source, error) {
	return t.source(ctx, sourceGet, map[string]any{"userId": userID, "id": id}, userID, id)
}

func (t *tx) SourceByHash(ctx context.Context, userID, hash string) (graph.Source, error) {
	s, err := t.source(ctx, sourceByHash, map[string]any{"userId": userID, "contentHash": hash}, userID, hash)
	if err, ok := err.(*graph.NotFoundError); ok {
		err.What = "source with hash"
	}
	return s, err
}

// source reads at most one source with st; key names it when there is none.
func (t *tx) source(ctx context.Context, st cypher.Statement, params map[string]any, userID, key string) (graph.Source, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Source{}, err
	}
	rows, err := t.run(ctx, st, cypher.Fill{}, params)
	if err != nil {
		return graph.Source{}, err
	}
	out, err := mapRows(rows, "source", toSource)
	if err != nil {
		return graph.Source{}, err
	}
	if len(out) == 0 {
		return graph.Source{}, notFound("source", key)
	}
	return out[0], nil
}

// entityProps are the properties entity_put sets itself: a snapshot field
// of one of these names stays in snapshot_json only.
var entityProps = map[string]bool{
	"id": true, "user_id": true, "entity_type": true, "canonical_name": true, "schema_version": true,
	"snapshot_json": true, "provenance_json": true, "observation_count": true, "last_observation_at": true,
	"created_at": true, "computed_at": true, "merged_into": true, "merged_at": true,
}

// entityParams are the parameters of entity_put for e.
func entityParams(e graph.Entity) (map[string]any, error) {
	snap, err := encodeJSON(e.Snapshot)
	if err != nil {
		return nil, err
	}
	prov, err := encodeJSON(e.Provenance)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"id": e.ID, "userId": e.UserID, "entityType": e.Type, "canonicalName": e.CanonicalName,
		"schemaVersion": e.SchemaVersion, "snapshotJson": snap, "provenanceJson": prov,
		"snapshotProps":    storableProps(e.Snapshot, entityProps),
		"observationCount": int64(e.ObservationCount), "lastObservationAt": e.LastObservationAt.UTC(),
		"createdAt": e.CreatedAt.UTC(), "computedAt": e.ComputedAt.UTC(),
		"mergedInto": nullString(e.MergedInto), "mergedAt": nullTime(e.MergedAt),
	}, nil
}

// PutEntity implements graph.DriverTx. The entity's type is its second
// label (cypher.Label); then the observations recorded for it before it
// existed are linked to it, so that provenance is a traversal.
func (t *tx) PutEntity(ctx context.Context, e graph.Entity) error {
	if err := t.enter(ctx, e.UserID); err != nil {
		return err
	}
	params, err := entityParams(e)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, entityPut, cypher.Fill{EntityType: e.Type}, params)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("graph/neo4j: put entity %s: the id belongs to another user: %w", e.ID, graph.ErrConflict)
	}
	_, err = t.run(ctx, entityLinkObs, cypher.Fill{}, map[string]any{"userId": e.UserID, "id": e.ID})
	return err
}

func (t *tx) Entity(ctx context.Context, userID, id string) (graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Entity{}, err
	}
	rows, err := t.run(ctx, entityGet, cypher.Fill{}, map[string]any{"userId": userID, "id": id})
	if err != nil {
		return graph.Entity{}, err
	}
	out, err := mapRows(rows, "entity", toEntity)
	if err != nil {
		return graph.Entity{}, err
	}
	if len(out) == 0 {
		return graph.Entity{}, notFound("entity", id)
	}
	return out[0], nil
}

func (t *tx) Entities(ctx context.Context, userID string, ids []string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []graph.Entity{}, nil
	}
	rows, err := t.run(ctx, entitiesGet, cypher.Fill{}, map[string]any{"userId": userID, "ids": ids})
	if err != nil {
		return nil, err
	}
	found, err := mapRows(rows, "entity", toEntity)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]graph.Entity, len(found))
	for _, e := range found {
		byID[e.ID] = e
	}
	out := make([]graph.Entity, 0, len(byID))
	for _, id := range ids {
		if e, ok := byID[id]; ok {
			out = append(out, e)
			delete(byID, id)
		}
	}
	return out, nil
}

// entityFilterParams are the parameters entity_count, entity_list and
// entity_stats_list share.
func entityFilterParams(f graph.EntityFilter) map[string]any {
	return map[string]any{
		"userId": f.UserID, "types": nullList(f.Types), "includeMerged": f.IncludeMerged,
		"offset": int64(max(f.Page.Offset, 0)), "limit": int64(limitOr(f.Page, 100)),
	}
}

func (t *tx) ListEntities(ctx context.Context, f graph.EntityFilter) ([]graph.Entity, int, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, 0, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.Entity{}, 0, nil
	}
	params := entityFilterParams(f)
	rows, err := t.run(ctx, entityCount, cypher.Fill{}, params)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) != 1 {
		return nil, 0, fmt.Errorf("graph/neo4j: entity_count returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	total := r.int("total")
	if r.err != nil {
		return nil, 0, r.err
	}
	rows, err = t.run(ctx, entityList, cypher.Fill{}, params)
	if err != nil {
		return nil, 0, err
	}
	out, err := mapRows(rows, "entity", toEntity)
	return out, total, err
}

func (t *tx) ListEntityStats(ctx context.Context, f graph.EntityFilter) ([]graph.EntityStat, error) {
	if err := t.enter(ctx, f.UserID); err != nil {
		return nil, err
	}
	if f.Types != nil && len(f.Types) == 0 {
		return []graph.EntityStat{}, nil
	}
	rows, err := t.run(ctx, entityStatsList, cypher.Fill{}, entityFilterParams(f))
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "", toEntityStat)
}

// SetIdentifiers implements graph.DriverTx: identifiers_clear, then
// identifiers_add with the new ones.
func (t *tx) SetIdentifiers(ctx context.Context, userID, entityID string, ids []graph.Identifier) error {
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if _, err := t.run(ctx, identifiersClear, cypher.Fill{}, map[string]any{"userId": userID, "entityId": entityID}); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = map[string]any{"field": id.Field, "value": id.Value}
	}
	_, err := t.run(ctx, identifiersAdd, cypher.Fill{}, map[string]any{"userId": userID, "entityId": entityID, "identifiers": list})
	return err
}

func (t *tx) EntitiesByIdentifier(ctx context.Context, userID, value, entityType string) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, entitiesByIdentifier, cypher.Fill{}, map[string]any{
		"userId": userID, "value": value, "entityType": nullString(entityType),
	})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "entity", toEntity)
}

func (t *tx) EntityTypeCounts(ctx context.Context, userID string) (map[string]int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, entityTypeCounts, cypher.Fill{}, map[string]any{"userId": userID})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, row := range rows {
		r := record{m: row}
		typ, n := r.str("entity_type"), r.int("total")
		if r.err != nil {
			return nil, r.err
		}
		out[typ] = n
	}
	return out, nil
}
