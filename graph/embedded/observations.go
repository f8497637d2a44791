package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	return t.InsertObservations(ctx, []graph.Observation{o})
}

// observationInsertColumns is how many parameters one row of
// InsertObservations takes.
const observationInsertColumns = 12

// InsertObservations implements graph.DriverTx: one multi-row insert per
// chunk. A chunk that would repeat an id fails whole (SQLite undoes the
// statement), so nothing of it is stored.
func (t *tx) InsertObservations(ctx context.Context, obs []graph.Observation) error {
	return chunks(len(obs), rowChunk(observationInsertColumns), func(start, end int) error {
		args := make([]any, 0, (end-start)*observationInsertColumns)
		for _, o := range obs[start:end] {
			fields, err := jsoncodec.Encode(orEmpty(o.Fields))
			if err != nil {
				return err
			}
			orig := o.OriginalEntityID
			if orig == "" {
				orig = o.EntityID
			}
			args = append(args, o.ID, o.UserID, o.EntityID, o.EntityType, o.SchemaVersion, o.SourceID, micros(o.ObservedAt),
				micros(o.CreatedAt), o.SpecificityScore, o.SourcePriority, fields, orig)
		}
		_, err := t.exec(ctx, `INSERT INTO observations
		(id, user_id, entity_id, entity_type, schema_version, source_id, observed_at, created_at,
		 specificity_score, source_priority, fields, original_entity_id)
		VALUES `+valueRows(end-start, observationInsertColumns), args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("graph/embedded: observation %s: %w", firstID(obs[start:end], func(o graph.Observation) string { return o.ID }), graph.ErrConflict)
		}
		return wrap("insert observations", err)
	})
}

// firstID names a row of a failed insert: the only one, or the first one
// followed by how many others there were.
func firstID[T any](rows []T, id func(T) string) string {
	if len(rows) == 1 {
		return id(rows[0])
	}
	return fmt.Sprintf("%s (or one of %d others)", id(rows[0]), len(rows)-1)
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
	o, err := scanObservation(t.queryRow(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND id = $2`, userID, id))
	if noRows(err) {
		return o, notFound("observation", id)
	}
	return o, wrap("read observation", err)
}

func (t *tx) Observations(ctx context.Context, userID, entityID string, p graph.Page) ([]graph.Observation, int, error) {
	var total int
	if err := t.queryRow(ctx, `SELECT count(*) FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID).Scan(&total); err != nil {
		return nil, 0, wrap("count observations", err)
	}
	rows, err := t.query(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2
		ORDER BY observed_at DESC, id ASC LIMIT $3 OFFSET $4`, userID, entityID, limitOr(p, 100), p.Offset)
	if err != nil {
		return nil, 0, wrap("list observations", err)
	}
	out, err := collectObservations(rows)
	return out, total, err
}

func (t *tx) AllObservations(ctx context.Context, userID, entityID string) ([]graph.Observation, error) {
	rows, err := t.query(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND entity_id = $2`, userID, entityID)
	if err != nil {
		return nil, wrap("list observations", err)
	}
	return collectObservations(rows)
}

// EntitiesObservations implements graph.DriverTx.
func (t *tx) EntitiesObservations(ctx context.Context, userID string, entityIDs []string) ([]graph.Observation, error) {
	out := []graph.Observation{}
	err := chunks(len(entityIDs), 500, func(start, end int) error {
		rows, err := t.query(ctx, `SELECT `+observationColumns+` FROM observations
			WHERE user_id = ? AND entity_id IN (`+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(entityIDs[start:end])...)...)
		if err != nil {
			return wrap("list observations", err)
		}
		obs, err := collectObservations(rows)
		out = append(out, obs...)
		return err
	})
	return out, err
}

// ObservationsByID implements graph.DriverTx.
func (t *tx) ObservationsByID(ctx context.Context, userID string, ids []string) ([]graph.Observation, error) {
	found := make([]graph.Observation, 0, len(ids))
	err := chunks(len(ids), 500, func(start, end int) error {
		// "+user_id" makes SQLite find each id by the primary key rather
		// than walk the user's rows of an index (see Entities).
		rows, err := t.query(ctx, `SELECT `+observationColumns+` FROM observations
			WHERE +user_id = ? AND id IN (`+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(ids[start:end])...)...)
		if err != nil {
			return wrap("read observations", err)
		}
		obs, err := collectObservations(rows)
		found = append(found, obs...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return byid.InOrder(ids, found, func(o graph.Observation) string { return o.ID }), nil
}

func (t *tx) ObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.Observation, error) {
	rows, err := t.query(ctx, `SELECT `+observationColumns+` FROM observations WHERE user_id = $1 AND source_id = $2 ORDER BY id`, userID, sourceID)
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
	res, err := t.exec(ctx, `UPDATE observations SET entity_id = $3 WHERE user_id = $1 AND entity_id = $2`, userID, from, to)
	if err != nil {
		return 0, wrap("move observations", err)
	}
	n, err := res.RowsAffected()
	return int(n), wrap("move observations", err)
}

func (t *tx) InsertRawFragment(ctx context.Context, f graph.RawFragment) error {
	return t.InsertRawFragments(ctx, []graph.RawFragment{f})
}

// rawFragmentColumns is how many parameters one row of InsertRawFragments
// takes.
const rawFragmentColumns = 8

// InsertRawFragments implements graph.DriverTx, as InsertObservations does.
func (t *tx) InsertRawFragments(ctx context.Context, fs []graph.RawFragment) error {
	return chunks(len(fs), rowChunk(rawFragmentColumns), func(start, end int) error {
		args := make([]any, 0, (end-start)*rawFragmentColumns)
		for _, f := range fs[start:end] {
			val, err := jsoncodec.Encode(f.Value)
			if err != nil {
				return err
			}
			args = append(args, f.ID, f.UserID, f.SourceID, f.EntityID, f.EntityType, f.Field, val, micros(f.CreatedAt))
		}
		_, err := t.exec(ctx, `INSERT INTO raw_fragments (id, user_id, source_id, entity_id, entity_type, field, value, created_at)
			VALUES `+valueRows(end-start, rawFragmentColumns), args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("graph/embedded: raw fragment %s: %w", firstID(fs[start:end], func(f graph.RawFragment) string { return f.ID }), graph.ErrConflict)
		}
		return wrap("insert raw fragments", err)
	})
}

// RawFragments implements graph.DriverTx.
func (t *tx) RawFragments(ctx context.Context, q graph.RawFragmentQuery) ([]graph.RawFragment, error) {
	out := []graph.RawFragment{}
	if q.EntityIDs != nil && len(q.EntityIDs) == 0 {
		return out, nil
	}
	read := func(where string, args ...any) error {
		rows, err := t.query(ctx, `SELECT id, user_id, source_id, entity_id, entity_type, field, value, created_at
			FROM raw_fragments WHERE user_id = ? AND (? = '' OR entity_type = ?)`+where, args...)
		if err != nil {
			return wrap("list raw fragments", err)
		}
		return wrap("read raw fragments", eachRow(rows, func(r *sql.Rows) error {
			var f graph.RawFragment
			var val string
			var created int64
			if err := r.Scan(&f.ID, &f.UserID, &f.SourceID, &f.EntityID, &f.EntityType, &f.Field, &val, &created); err != nil {
				return err
			}
			f.CreatedAt = fromMicros(created)
			if err := jsoncodec.Decode(val, &f.Value); err != nil {
				return err
			}
			out = append(out, f)
			return nil
		}))
	}
	base := []any{q.UserID, q.EntityType, q.EntityType}
	if q.EntityIDs == nil {
		if err := read(``, base...); err != nil {
			return nil, err
		}
	} else if err := chunks(len(q.EntityIDs), 500, func(start, end int) error {
		return read(` AND entity_id IN (`+qmarks(end-start)+`)`, append(base, anySlice(q.EntityIDs[start:end])...)...)
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b graph.RawFragment) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
