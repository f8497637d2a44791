package neo4j

import (
	"context"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
)

var _ graph.Exporter = (*tx)(nil)

var _ graph.EntitiesRelationshipsLister = (*tx)(nil)

var (
	sourcesAfter             = cypher.Must("sources_after")
	entitiesAfter            = cypher.Must("entities_after")
	entitiesIdentifiers      = cypher.Must("entities_identifiers")
	entitiesTimelines        = cypher.Must("entities_timelines")
	rawFragmentsAfter        = cypher.Must("raw_fragments_after")
	rawFragmentsGet          = cypher.Must("raw_fragments_get")
	relationshipPeriodsAfter = cypher.Must("relationship_periods_after")
)

// page runs a paged export statement (sources_after, …) and maps the
// field key of each row with to.
func page[T any](ctx context.Context, t *tx, st cypher.Statement, userID string, params map[string]any,
	key string, to func(map[string]any) (T, error)) ([]T, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	params["userId"] = userID
	rows, err := t.run(ctx, st, cypher.Fill{}, params)
	if err != nil {
		return nil, err
	}
	return mapRows(rows, key, to)
}

// SourcesAfter implements graph.Exporter with one sources_after.
func (t *tx) SourcesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Source, error) {
	return page(ctx, t, sourcesAfter, userID, map[string]any{"afterId": after, "limit": int64(limit)}, "source", toSource)
}

// EntitiesAfter implements graph.Exporter with one entities_after.
func (t *tx) EntitiesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Entity, error) {
	return page(ctx, t, entitiesAfter, userID, map[string]any{"afterId": after, "limit": int64(limit)}, "entity", toEntity)
}

// EntitiesIdentifiers implements graph.Exporter with one
// entities_identifiers.
func (t *tx) EntitiesIdentifiers(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityIdentifiers, error) {
	if len(entityIDs) == 0 {
		return []graph.EntityIdentifiers{}, t.enter(ctx, userID)
	}
	type row struct {
		entityID string
		ident    graph.Identifier
	}
	rows, err := page(ctx, t, entitiesIdentifiers, userID, map[string]any{"entityIds": distinct(entityIDs)}, "",
		func(m map[string]any) (row, error) {
			r := record{m: m}
			v := row{entityID: r.str("entity_id"), ident: graph.Identifier{Field: r.str("field"), Value: r.str("value")}}
			return v, r.err
		})
	if err != nil {
		return nil, err
	}
	byEntity := map[string][]graph.Identifier{}
	for _, r := range rows {
		byEntity[r.entityID] = append(byEntity[r.entityID], r.ident)
	}
	return graph.SortEntityIdentifiers(byEntity), nil
}

// EntitiesTimelines implements graph.Exporter with one entities_timelines.
func (t *tx) EntitiesTimelines(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityTimeline, error) {
	if len(entityIDs) == 0 {
		return []graph.EntityTimeline{}, t.enter(ctx, userID)
	}
	events, err := page(ctx, t, entitiesTimelines, userID, map[string]any{"entityIds": distinct(entityIDs)}, "event", toTimelineEvent)
	if err != nil {
		return nil, err
	}
	byEntity := map[string][]graph.TimelineEvent{}
	for _, ev := range events {
		byEntity[ev.EntityID] = append(byEntity[ev.EntityID], ev)
	}
	return graph.SortEntityTimelines(byEntity), nil
}

func toRawFragment(m map[string]any) (graph.RawFragment, error) {
	r := record{m: m}
	f := graph.RawFragment{
		ID: r.str("id"), UserID: r.str("user_id"), SourceID: r.str("source_id"), EntityID: r.str("entity_id"),
		EntityType: r.str("entity_type"), Field: r.str("field"), Value: r.jsonValue("value_json"),
		CreatedAt: r.time("created_at"),
	}
	return f, r.err
}

// RawFragmentsAfter implements graph.Exporter with one raw_fragments_after.
func (t *tx) RawFragmentsAfter(ctx context.Context, userID, after string, limit int) ([]graph.RawFragment, error) {
	return page(ctx, t, rawFragmentsAfter, userID, map[string]any{"afterId": after, "limit": int64(limit)}, "fragment", toRawFragment)
}

// RawFragmentsByID implements graph.Exporter with one raw_fragments_get.
func (t *tx) RawFragmentsByID(ctx context.Context, userID string, ids []string) ([]graph.RawFragment, error) {
	if len(ids) == 0 {
		return []graph.RawFragment{}, t.enter(ctx, userID)
	}
	found, err := page(ctx, t, rawFragmentsGet, userID, map[string]any{"ids": distinct(ids)}, "fragment", toRawFragment)
	if err != nil {
		return nil, err
	}
	return byid.InOrder(ids, found, func(f graph.RawFragment) string { return f.ID }), nil
}

// RelationshipPeriodsAfter implements graph.Exporter with one
// relationship_periods_after.
func (t *tx) RelationshipPeriodsAfter(ctx context.Context, userID string, after graph.PeriodKey, limit int) ([]graph.Relationship, error) {
	return page(ctx, t, relationshipPeriodsAfter, userID, map[string]any{
		"afterId": after.ID, "afterCreatedAt": nullTime(after.CreatedAt), "limit": int64(limit),
	}, "relationship", toRelationship)
}
