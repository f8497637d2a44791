package postgres

import (
	"context"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

var _ graph.Exporter = (*tx)(nil)

// SourcesAfter implements graph.Exporter.
func (t *tx) SourcesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Source, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanSource, `SELECT `+sourceColumns+` FROM sources
		WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`, userID, after, limit)
	return out, wrap("list sources", err)
}

// EntitiesAfter implements graph.Exporter.
func (t *tx) EntitiesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Entity, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanEntity, `SELECT `+entityColumns+` FROM entities
		WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`, userID, after, limit)
	return out, wrap("list entities", err)
}

// EntitiesIdentifiers implements graph.Exporter.
func (t *tx) EntitiesIdentifiers(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityIdentifiers, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	type row struct {
		entityID string
		ident    graph.Identifier
	}
	rows, err := query(ctx, t, func(r rowScanner) (row, error) {
		var v row
		err := r.Scan(&v.entityID, &v.ident.Field, &v.ident.Value)
		return v, err
	}, `SELECT entity_id, field, value FROM entity_identifiers WHERE user_id = $1 AND entity_id = ANY($2)`, userID, entityIDs)
	if err != nil {
		return nil, wrap("read identifiers", err)
	}
	byEntity := map[string][]graph.Identifier{}
	for _, r := range rows {
		byEntity[r.entityID] = append(byEntity[r.entityID], r.ident)
	}
	return graph.SortEntityIdentifiers(byEntity), nil
}

// EntitiesTimelines implements graph.Exporter.
func (t *tx) EntitiesTimelines(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityTimeline, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	events, err := query(ctx, t, func(r rowScanner) (graph.TimelineEvent, error) {
		var ev graph.TimelineEvent
		var props string
		if err := r.Scan(&ev.ID, &ev.UserID, &ev.EntityID, &ev.EventType, &ev.Timestamp, &ev.Time, &ev.SourceID, &props); err != nil {
			return ev, err
		}
		ev.Time = ev.Time.UTC()
		var err error
		ev.Properties, err = jsoncodec.Map(props)
		return ev, err
	}, `SELECT id, user_id, entity_id, event_type, event_timestamp, event_time, source_id, properties::text
		FROM timeline_events WHERE user_id = $1 AND entity_id = ANY($2)`, userID, entityIDs)
	if err != nil {
		return nil, wrap("read timeline events", err)
	}
	byEntity := map[string][]graph.TimelineEvent{}
	for _, ev := range events {
		byEntity[ev.EntityID] = append(byEntity[ev.EntityID], ev)
	}
	return graph.SortEntityTimelines(byEntity), nil
}

const rawFragmentSelect = `SELECT id, user_id, source_id, entity_id, entity_type, field, value::text, created_at FROM raw_fragments`

func scanRawFragment(r rowScanner) (graph.RawFragment, error) {
	var f graph.RawFragment
	var val string
	if err := r.Scan(&f.ID, &f.UserID, &f.SourceID, &f.EntityID, &f.EntityType, &f.Field, &val, &f.CreatedAt); err != nil {
		return f, err
	}
	f.CreatedAt = f.CreatedAt.UTC()
	err := jsoncodec.Decode(val, &f.Value)
	return f, err
}

// RawFragmentsAfter implements graph.Exporter.
func (t *tx) RawFragmentsAfter(ctx context.Context, userID, after string, limit int) ([]graph.RawFragment, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanRawFragment, rawFragmentSelect+` WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
		userID, after, limit)
	return out, wrap("list raw fragments", err)
}

// RawFragmentsByID implements graph.Exporter.
func (t *tx) RawFragmentsByID(ctx context.Context, userID string, ids []string) ([]graph.RawFragment, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, t, scanRawFragment, rawFragmentSelect+` WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, wrap("read raw fragments", err)
	}
	found := make(map[string]graph.RawFragment, len(rows))
	for _, f := range rows {
		found[f.ID] = f
	}
	return graph.InOrderOf(ids, found), nil
}

// RelationshipPeriodsAfter implements graph.Exporter.
func (t *tx) RelationshipPeriodsAfter(ctx context.Context, userID string, after graph.PeriodKey, limit int) ([]graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	var createdAfter *time.Time // nil: from the first period of after.ID
	if !after.CreatedAt.IsZero() {
		createdAfter = &after.CreatedAt
	}
	out, err := query(ctx, t, func(r rowScanner) (graph.Relationship, error) { return scanRelationship(r) },
		`SELECT `+relationshipColumns+` FROM relationships r
		WHERE r.user_id = $1 AND (r.id > $2 OR (r.id = $2 AND ($3::timestamptz IS NULL OR r.created_at > $3)))
		ORDER BY r.id, r.created_at LIMIT $4`, userID, after.ID, createdAfter, limit)
	return out, wrap("list relationship periods", err)
}
