package embedded

import (
	"context"
	"database/sql"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

var _ graph.Exporter = (*tx)(nil)

// SourcesAfter implements graph.Exporter.
func (t *tx) SourcesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Source, error) {
	rows, err := t.query(ctx, `SELECT `+sourceColumns+` FROM sources WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
		userID, after, limit)
	if err != nil {
		return nil, wrap("list sources", err)
	}
	out := []graph.Source{}
	err = eachRow(rows, func(r *sql.Rows) error {
		s, err := scanSource(r)
		out = append(out, s)
		return err
	})
	return out, wrap("list sources", err)
}

// EntitiesAfter implements graph.Exporter.
func (t *tx) EntitiesAfter(ctx context.Context, userID, after string, limit int) ([]graph.Entity, error) {
	rows, err := t.query(ctx, `SELECT `+entityColumns+` FROM entities WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
		userID, after, limit)
	if err != nil {
		return nil, wrap("list entities", err)
	}
	out := []graph.Entity{}
	err = eachRow(rows, func(r *sql.Rows) error {
		e, err := scanEntity(r)
		out = append(out, e)
		return err
	})
	return out, wrap("list entities", err)
}

// identifiersOfEntities and timelinesOfEntities, followed by the entity
// ids' placeholders and ")", read what an export writes of those
// entities, id by id (TestEntityQueriesSeekIDs): the identifiers
// through (user_id, entity_id), where SQLite would rather walk every
// identifier of the user in the primary key, which covers the columns;
// the events through timeline_events_entity, as clearTimelines.
const (
	identifiersOfEntities = `SELECT entity_id, field, value FROM entity_identifiers
		INDEXED BY entity_identifiers_user_entity WHERE user_id = ? AND entity_id IN (`
	timelinesOfEntities = `SELECT id, user_id, entity_id, event_type, event_timestamp, event_time, source_id, properties
		FROM timeline_events WHERE +user_id = ? AND entity_id IN (`
)

// EntitiesIdentifiers implements graph.Exporter.
func (t *tx) EntitiesIdentifiers(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityIdentifiers, error) {
	byEntity := map[string][]graph.Identifier{}
	err := chunks(len(entityIDs), 500, func(start, end int) error {
		rows, err := t.query(ctx, identifiersOfEntities+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(entityIDs[start:end])...)...)
		if err != nil {
			return wrap("read identifiers", err)
		}
		return wrap("read identifiers", eachRow(rows, func(r *sql.Rows) error {
			var id string
			var ident graph.Identifier
			if err := r.Scan(&id, &ident.Field, &ident.Value); err != nil {
				return err
			}
			byEntity[id] = append(byEntity[id], ident)
			return nil
		}))
	})
	if err != nil {
		return nil, err
	}
	return graph.SortEntityIdentifiers(byEntity), nil
}

// EntitiesTimelines implements graph.Exporter.
func (t *tx) EntitiesTimelines(ctx context.Context, userID string, entityIDs []string) ([]graph.EntityTimeline, error) {
	byEntity := map[string][]graph.TimelineEvent{}
	err := chunks(len(entityIDs), 500, func(start, end int) error {
		rows, err := t.query(ctx, timelinesOfEntities+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(entityIDs[start:end])...)...)
		if err != nil {
			return wrap("read timeline events", err)
		}
		return wrap("read timeline events", eachRow(rows, func(r *sql.Rows) error {
			var ev graph.TimelineEvent
			var at int64
			var props string
			if err := r.Scan(&ev.ID, &ev.UserID, &ev.EntityID, &ev.EventType, &ev.Timestamp, &at, &ev.SourceID, &props); err != nil {
				return err
			}
			ev.Time = fromMicros(at)
			var err error
			ev.Properties, err = jsoncodec.Map(props)
			byEntity[ev.EntityID] = append(byEntity[ev.EntityID], ev)
			return err
		}))
	})
	if err != nil {
		return nil, err
	}
	return graph.SortEntityTimelines(byEntity), nil
}

const rawFragmentSelect = `SELECT id, user_id, source_id, entity_id, entity_type, field, value, created_at FROM raw_fragments`

func scanRawFragment(r *sql.Rows) (graph.RawFragment, error) {
	var f graph.RawFragment
	var val string
	var created int64
	if err := r.Scan(&f.ID, &f.UserID, &f.SourceID, &f.EntityID, &f.EntityType, &f.Field, &val, &created); err != nil {
		return f, err
	}
	f.CreatedAt = fromMicros(created)
	err := jsoncodec.Decode(val, &f.Value)
	return f, err
}

// RawFragmentsAfter implements graph.Exporter.
func (t *tx) RawFragmentsAfter(ctx context.Context, userID, after string, limit int) ([]graph.RawFragment, error) {
	rows, err := t.query(ctx, rawFragmentSelect+` WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`, userID, after, limit)
	if err != nil {
		return nil, wrap("list raw fragments", err)
	}
	out := []graph.RawFragment{}
	err = eachRow(rows, func(r *sql.Rows) error {
		f, err := scanRawFragment(r)
		out = append(out, f)
		return err
	})
	return out, wrap("list raw fragments", err)
}

// RawFragmentsByID implements graph.Exporter.
func (t *tx) RawFragmentsByID(ctx context.Context, userID string, ids []string) ([]graph.RawFragment, error) {
	found := map[string]graph.RawFragment{}
	err := chunks(len(ids), 500, func(start, end int) error {
		rows, err := t.query(ctx, rawFragmentSelect+` WHERE +user_id = ? AND id IN (`+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(ids[start:end])...)...)
		if err != nil {
			return wrap("read raw fragments", err)
		}
		return wrap("read raw fragments", eachRow(rows, func(r *sql.Rows) error {
			f, err := scanRawFragment(r)
			found[f.ID] = f
			return err
		}))
	})
	if err != nil {
		return nil, err
	}
	return graph.InOrderOf(ids, found), nil
}

// RelationshipPeriodsAfter implements graph.Exporter.
func (t *tx) RelationshipPeriodsAfter(ctx context.Context, userID string, after graph.PeriodKey, limit int) ([]graph.Relationship, error) {
	createdAfter := int64(-1 << 62)
	if !after.CreatedAt.IsZero() {
		createdAfter = micros(after.CreatedAt)
	}
	rows, err := t.query(ctx, `SELECT `+relationshipColumns+` FROM relationships
		WHERE user_id = $1 AND (id > $2 OR (id = $2 AND created_at > $3))
		ORDER BY id, created_at LIMIT $4`, userID, after.ID, createdAfter, limit)
	if err != nil {
		return nil, wrap("list relationship periods", err)
	}
	out := []graph.Relationship{}
	err = eachRow(rows, func(r *sql.Rows) error {
		rel, err := scanRelationship(r)
		out = append(out, rel)
		return err
	})
	return out, wrap("list relationship periods", err)
}
