package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
	"github.com/cairnkg/cairn/graph/internal/jsoncodec"
)

// relationshipPutParams is how many parameters one row of PutRelationships
// takes: its columns, with each endpoint's type read by a subquery of two.
const relationshipPutParams = 15

// PutRelationships implements graph.DriverTx: one multi-row upsert per
// chunk. An endpoint that is not an entity of the user leaves its type
// NULL, which fails the statement (SQLite undoes it whole).
func (t *tx) PutRelationships(ctx context.Context, rs []graph.Relationship) error {
	const row = `(?, ?, ?, ?, ?, (SELECT entity_type FROM entities WHERE id = ? AND user_id = ?),
		(SELECT entity_type FROM entities WHERE id = ? AND user_id = ?), ?, ?, ?, ?, ?, ?)`
	return chunks(len(rs), rowChunk(relationshipPutParams), func(start, end int) error {
		args := make([]any, 0, (end-start)*relationshipPutParams)
		values := make([]byte, 0, (end-start)*(len(row)+2))
		for i, r := range rs[start:end] {
			meta, err := jsoncodec.Encode(orEmpty(r.Metadata))
			if err != nil {
				return err
			}
			prov, err := jsoncodec.Encode(orEmptyStrings(r.Provenance))
			if err != nil {
				return err
			}
			if i > 0 {
				values = append(values, ", "...)
			}
			values = append(values, row...)
			args = append(args, r.ID, r.UserID, r.Type, r.SourceEntityID, r.TargetEntityID,
				r.SourceEntityID, r.UserID, r.TargetEntityID, r.UserID, meta, prov,
				r.ObservationCount, micros(r.CreatedAt), micros(r.LastObservationAt), nullMicros(r.EndedAt))
		}
		_, err := t.exec(ctx, `INSERT INTO relationships
		(id, user_id, relationship_type, source_entity_id, target_entity_id, source_type, target_type,
		 metadata, provenance, observation_count, created_at, last_observation_at, ended_at)
		VALUES `+string(values)+`
		ON CONFLICT (id, created_at) DO UPDATE SET
		  metadata = excluded.metadata, provenance = excluded.provenance,
		  observation_count = excluded.observation_count,
		  last_observation_at = excluded.last_observation_at, ended_at = excluded.ended_at
		WHERE relationships.user_id = excluded.user_id`, args...)
		if isNotNullViolation(err) {
			return fmt.Errorf("graph/embedded: put relationships %s: an endpoint is not an entity of the user: %w",
				firstID(rs[start:end], func(r graph.Relationship) string { return r.ID }), graph.ErrNotFound)
		}
		return wrap("put relationships", err)
	})
}

// Relationships implements graph.DriverTx: every period of the ids, of
// which it keeps the newest.
func (t *tx) Relationships(ctx context.Context, userID string, ids []string) ([]graph.Relationship, error) {
	var periods []graph.Relationship
	err := chunks(len(ids), 500, func(start, end int) error {
		// "+user_id", as in Entities: the primary key finds each id.
		rows, err := t.query(ctx, `SELECT `+relationshipColumns+` FROM relationships
			WHERE +user_id = ? AND id IN (`+qmarks(end-start)+`)`, append([]any{userID}, anySlice(ids[start:end])...)...)
		if err != nil {
			return wrap("read relationships", err)
		}
		return wrap("read relationships", eachRow(rows, func(r *sql.Rows) error {
			rel, err := scanRelationship(r)
			periods = append(periods, rel)
			return err
		}))
	})
	if err != nil {
		return nil, err
	}
	return byid.Newest(ids, periods, func(r graph.Relationship) string { return r.ID },
		func(r graph.Relationship) time.Time { return r.CreatedAt }), nil
}

// relationshipObservationInsertColumns is how many parameters one row of
// InsertRelationshipObservations takes.
const relationshipObservationInsertColumns = 9

// InsertRelationshipObservations implements graph.DriverTx as
// InsertObservations does: a chunk that would repeat an id fails whole.
func (t *tx) InsertRelationshipObservations(ctx context.Context, obs []graph.RelationshipObservation) error {
	return chunks(len(obs), rowChunk(relationshipObservationInsertColumns), func(start, end int) error {
		args := make([]any, 0, (end-start)*relationshipObservationInsertColumns)
		for _, o := range obs[start:end] {
			meta, err := jsoncodec.Encode(orEmpty(o.Metadata))
			if err != nil {
				return err
			}
			args = append(args, o.ID, o.UserID, o.RelationshipID, o.SourceID, micros(o.ObservedAt), micros(o.CreatedAt),
				o.SpecificityScore, o.SourcePriority, meta)
		}
		_, err := t.exec(ctx, `INSERT INTO relationship_observations
		(id, user_id, relationship_id, source_id, observed_at, created_at, specificity_score, source_priority, metadata)
		VALUES `+valueRows(end-start, relationshipObservationInsertColumns), args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("graph/embedded: relationship observation %s: %w",
				firstID(obs[start:end], func(o graph.RelationshipObservation) string { return o.ID }), graph.ErrConflict)
		}
		return wrap("insert relationship observations", err)
	})
}

// RelationshipsObservations implements graph.DriverTx.
func (t *tx) RelationshipsObservations(ctx context.Context, userID string, relIDs []string) ([]graph.RelationshipObservation, error) {
	out := []graph.RelationshipObservation{}
	err := chunks(len(relIDs), 500, func(start, end int) error {
		rows, err := t.query(ctx, `SELECT `+relationshipObservationColumns+` FROM relationship_observations
			WHERE user_id = ? AND relationship_id IN (`+qmarks(end-start)+`)`,
			append([]any{userID}, anySlice(relIDs[start:end])...)...)
		if err != nil {
			return wrap("list relationship observations", err)
		}
		return wrap("list relationship observations", eachRow(rows, func(r *sql.Rows) error {
			o, err := scanRelationshipObservation(r)
			out = append(out, o)
			return err
		}))
	})
	return out, err
}
