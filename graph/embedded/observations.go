package embedded

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	fields, err := jsoncodec.Encode(orEmpty(o.Fields))
	if err != nil {
		return err
	}
	orig := o.OriginalEntityID
	if orig == "" {
		orig = o.EntityID
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO observations
		(id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
		 specificity_score, source_priority, fields, original_entity_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		o.ID, o.UserID, o.EntityID, o.EntityType, o.SchemaVersion, o.SourceID, micros(o.ObservedAt), micros(o.CreatedAt),
		o.SpecificityScore, o.SourcePriority, fields, orig)
	if isUniqueViolation(err) {
		return fmt.Errorf("graph/embedded: observation %s: %w", o.ID, graph.ErrConflict)
	}
	return wrap("insert observation", err)
}

const observationColumns = `id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
	specificity_score, source_priority, fields, original_entity_id`

func scanObservation(row interface{ Scan(...any) error }) (graph.Observation, error) {
	var o graph.Observation
	var observed, created int64
	var fields string
	if err := row.Scan(&o.ID, &o.UserID, &o.EntityID, &o.EntityType, &o.SchemaVersion, &o.SourceID, &observed, &created,
		&o.SpecificityScore, &o.SourcePriority, &fields, &o.OriginalEntityID); err != nil {
		return o, err
	}
	o.ObservedAt, o.CreatedAt = fromMicros(observed), fromMicros(created)
	var err error
	o.Fields, err = jsoncodec.Map(fields)
	return o, err
}

func (t *tx) Observation(ctx context.Context, userID, id string) (graph.Observation, error) {
	o, err := scanObservation(t.tx.QueryRowContext(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return o, notFound("observation", id)
	}
	return o, wrap("read observation", err)
}

func (t *tx) Observations(ctx context.Context, userID, entityID string, p graph.Page) ([]graph.Observation, int, error) {
	var total int
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID).Scan(&total); err != nil {
		return nil, 0, wrap("count observations", err)
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2
		ORDER BY observed_at DESC, id ASC LIMIT $3 OFFSET $4`, userID, entityID, limitOr(p, 100), p.Offset)
	if err != nil {
		return nil, 0, wrap("list observations", err)
	}
	out, err := collectObservations(rows)
	return out, total, err
}

func (t *tx) AllObservations(ctx context.Context, userID, entityID string) ([]graph.Observation, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID)
	if err != nil {
		return nil, wrap("list observations", err)
	}
	return collectObservations(rows)
}

func (t *tx) ObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.Observation, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND source_id = $2 ORDER BY id`, userID, sourceID)
	if err != nil {
		return nil, wrap("list observations by source", err)
	}
	return collectObservations(rows)
}

func collectObservations(rows *sql.Rows) ([]graph.Observation, error) {
	out := []graph.Observation{}
	err := eachRow(rows, func(r *sql.Rows) error {
		o, err := scanObservation(r)
		out = append(out, o)
		return err
	})
	return out, wrap("read observations", err)
}

func (t *tx) MoveObservations(ctx context.Context, userID, from, to string) (int, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE observations SET entity_id = $3 WHERE user_id = $1 AND entity_id = $2`, userID, from, to)
	if err != nil {
		return 0, wrap("move observations", err)
	}
	n, err := res.RowsAffected()
	return int(n), wrap("move observations", err)
}

func (t *tx) InsertRawFragment(ctx context.Context, f graph.RawFragment) error {
	val, err := jsoncodec.Encode(f.Value)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO raw_fragments (id, user_id, source_id, entity_id, entity_type, field, value, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		f.ID, f.UserID, f.SourceID, f.EntityID, f.EntityType, f.Field, val, micros(f.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("graph/embedded: raw fragment %s: %w", f.ID, graph.ErrConflict)
	}
	return wrap("insert raw fragment", err)
}
