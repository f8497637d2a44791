package postgres

import (
	"context"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	if err := t.enter(ctx, o.UserID); err != nil {
		return err
	}
	fields, err := jsoncodec.Encode(orEmpty(o.Fields))
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO observations
		(id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
		 specificity_score, source_priority, fields, original_entity_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
		o.ID, o.UserID, o.EntityID, o.EntityType, o.SchemaVersion, o.SourceID, o.ObservedAt, o.CreatedAt,
		o.SpecificityScore, o.SourcePriority, fields, o.OriginalEntityID)
	return inserted(tag, err, "observation", o.ID)
}

const observationColumns = `id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
	specificity_score, source_priority, fields::text, original_entity_id`

func scanObservation(row rowScanner) (graph.Observation, error) {
	var o graph.Observation
	var fields string
	if err := row.Scan(&o.ID, &o.UserID, &o.EntityID, &o.EntityType, &o.SchemaVersion, &o.SourceID,
		&o.ObservedAt, &o.CreatedAt, &o.SpecificityScore, &o.SourcePriority, &fields, &o.OriginalEntityID); err != nil {
		return o, err
	}
	o.ObservedAt, o.CreatedAt = o.ObservedAt.UTC(), o.CreatedAt.UTC()
	var err error
	o.Fields, err = jsoncodec.Map(fields)
	return o, err
}

func (t *tx) Observation(ctx context.Context, userID, id string) (graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Observation{}, err
	}
	o, err := scanObservation(t.tx.QueryRow(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return o, notFound("observation", id)
	}
	return o, wrap("read observation", err)
}

func (t *tx) Observations(ctx context.Context, userID, entityID string, p graph.Page) ([]graph.Observation, int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, 0, err
	}
	var total int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID).Scan(&total); err != nil {
		return nil, 0, wrap("count observations", err)
	}
	out, err := query(ctx, t, scanObservation, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2
		ORDER BY observed_at DESC, id ASC LIMIT $3 OFFSET $4`, userID, entityID, limitOr(p, 100), p.Offset)
	return out, total, wrap("list observations", err)
}

func (t *tx) AllObservations(ctx context.Context, userID, entityID string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanObservation, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID)
	return out, wrap("list observations", err)
}

func (t *tx) ObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanObservation, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND source_id = $2 ORDER BY id`, userID, sourceID)
	return out, wrap("list observations by source", err)
}

func (t *tx) MoveObservations(ctx context.Context, userID, from, to string) (int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE observations SET entity_id = $3 WHERE user_id = $1 AND entity_id = $2`, userID, from, to)
	if err != nil {
		return 0, wrap("move observations", err)
	}
	return int(tag.RowsAffected()), nil
}

func (t *tx) InsertRawFragment(ctx context.Context, f graph.RawFragment) error {
	if err := t.enter(ctx, f.UserID); err != nil {
		return err
	}
	val, err := jsoncodec.Encode(f.Value)
	if err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO raw_fragments (id, user_id, source_id, entity_id, entity_type, field, value, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		f.ID, f.UserID, f.SourceID, f.EntityID, f.EntityType, f.Field, val, f.CreatedAt)
	return inserted(tag, err, "raw fragment", f.ID)
}
