package postgres

import (
	"context"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	return t.InsertObservations(ctx, []graph.Observation{o})
}

// InsertObservations implements graph.DriverTx: one insert from arrays.
// Rows whose id exists are skipped (ON CONFLICT DO NOTHING keeps the
// transaction usable) and reported as ErrConflict.
func (t *tx) InsertObservations(ctx context.Context, obs []graph.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	n := len(obs)
	var (
		ids, users, entities, types, versions, sources, fields, origs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		observed, created                                             = make([]time.Time, n), make([]time.Time, n)
		specificity                                                   = make([]float64, n)
		priority                                                      = make([]int64, n)
	)
	for i, o := range obs {
		if err := t.enter(ctx, o.UserID); err != nil {
			return err
		}
		f, err := jsoncodec.Encode(orEmpty(o.Fields))
		if err != nil {
			return err
		}
		orig := o.OriginalEntityID
		if orig == "" {
			orig = o.EntityID
		}
		ids[i], users[i], entities[i], types[i], versions[i], sources[i], fields[i], origs[i] = o.ID, o.UserID, o.EntityID, o.EntityType, o.SchemaVersion, o.SourceID, f, orig
		observed[i], created[i], specificity[i], priority[i] = o.ObservedAt, o.CreatedAt, o.SpecificityScore, int64(o.SourcePriority)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO observations
		(id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
		 specificity_score, source_priority, fields, original_entity_id)
		SELECT id, u, e, typ, ver, src, observed, created, spec, prio, f::jsonb, orig
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[],
			$9::float8[], $10::bigint[], $11::text[], $12::text[])
			AS u(id, u, e, typ, ver, src, observed, created, spec, prio, f, orig)
		ON CONFLICT DO NOTHING`,
		ids, users, entities, types, versions, sources, observed, created, specificity, priority, fields, origs)
	return insertedAll(tag, err, "observation", ids)
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

// EntitiesObservations implements graph.DriverTx.
func (t *tx) EntitiesObservations(ctx context.Context, userID string, entityIDs []string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	out, err := query(ctx, t, scanObservation, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = ANY($2)`, userID, entityIDs)
	return out, wrap("list observations", err)
}

// ObservationsByID implements graph.DriverTx.
func (t *tx) ObservationsByID(ctx context.Context, userID string, ids []string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, t, scanObservation, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND id = ANY($2)`, userID, ids)
	if err != nil {
		return nil, wrap("read observations", err)
	}
	return byid.InOrder(ids, rows, func(o graph.Observation) string { return o.ID }), nil
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
	return t.InsertRawFragments(ctx, []graph.RawFragment{f})
}

// InsertRawFragments implements graph.DriverTx, as InsertObservations does.
func (t *tx) InsertRawFragments(ctx context.Context, fs []graph.RawFragment) error {
	if len(fs) == 0 {
		return nil
	}
	n := len(fs)
	var (
		ids, users, sources, entities, types, fields, values = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		created                                              = make([]time.Time, n)
	)
	for i, f := range fs {
		if err := t.enter(ctx, f.UserID); err != nil {
			return err
		}
		val, err := jsoncodec.Encode(f.Value)
		if err != nil {
			return err
		}
		ids[i], users[i], sources[i], entities[i], types[i], fields[i], values[i], created[i] = f.ID, f.UserID, f.SourceID, f.EntityID, f.EntityType, f.Field, val, f.CreatedAt
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO raw_fragments (id, user_id, source_id, entity_id, entity_type, field, value, created_at)
		SELECT id, u, src, e, typ, f, v::jsonb, created
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
			AS u(id, u, src, e, typ, f, v, created)
		ON CONFLICT DO NOTHING`,
		ids, users, sources, entities, types, fields, values, created)
	return insertedAll(tag, err, "raw fragment", ids)
}

// RawFragments implements graph.DriverTx.
func (t *tx) RawFragments(ctx context.Context, q graph.RawFragmentQuery) ([]graph.RawFragment, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if q.EntityIDs != nil && len(q.EntityIDs) == 0 {
		return []graph.RawFragment{}, nil
	}
	out, err := query(ctx, t, func(r rowScanner) (graph.RawFragment, error) {
		var f graph.RawFragment
		var val string
		if err := r.Scan(&f.ID, &f.UserID, &f.SourceID, &f.EntityID, &f.EntityType, &f.Field, &val, &f.CreatedAt); err != nil {
			return f, err
		}
		f.CreatedAt = f.CreatedAt.UTC()
		return f, jsoncodec.Decode(val, &f.Value)
	}, `SELECT id, user_id, source_id, entity_id, entity_type, field, value::text, created_at FROM raw_fragments
		WHERE user_id = $1 AND ($2 = '' OR entity_type = $2) AND ($3::text[] IS NULL OR entity_id = ANY($3))
		ORDER BY id`, q.UserID, q.EntityType, q.EntityIDs)
	return out, wrap("list raw fragments", err)
}
