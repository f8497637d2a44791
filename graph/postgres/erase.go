package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/cairnkg/cairn/graph"
)

// Erase implements graph.Eraser: one statement per kind of row. An entity's
// full-text vector (search) and text signature are columns of its row and
// go with it. PostgreSQL keeps the deleted tuples in its files until VACUUM
// reclaims them (docs/forgetting.md).
func (t *tx) Erase(ctx context.Context, e graph.Erasure) (graph.ErasedCounts, error) {
	var n graph.ErasedCounts
	if err := t.enter(ctx, e.UserID); err != nil {
		return n, err
	}
	rels, err := t.ids(ctx, `SELECT DISTINCT id FROM relationships
		WHERE user_id = $1 AND (source_entity_id = ANY($2) OR target_entity_id = ANY($2))`, e.UserID, e.EntityIDs)
	if err != nil {
		return n, err
	}
	if n.Touched, err = t.ids(ctx, `SELECT DISTINCT relationship_id FROM relationship_observations
		WHERE user_id = $1 AND source_id = ANY($2)`, e.UserID, e.SourceIDs); err != nil {
		return n, err
	}
	steps := []struct {
		count     *int
		what, sql string
		ids       []string
	}{
		{&n.RelationshipObservations, "erase relationship observations", `DELETE FROM relationship_observations WHERE user_id = $1 AND relationship_id = ANY($2)`, rels},
		{&n.RelationshipObservations, "erase relationship observations", `DELETE FROM relationship_observations WHERE user_id = $1 AND source_id = ANY($2)`, e.SourceIDs},
		{&n.Relationships, "erase relationships", `DELETE FROM relationships WHERE user_id = $1 AND id = ANY($2)`, rels},
		{&n.Relationships, "erase relationships", `DELETE FROM relationships r WHERE user_id = $1 AND id = ANY($2) AND NOT EXISTS
			(SELECT 1 FROM relationship_observations o WHERE o.user_id = r.user_id AND o.relationship_id = r.id)`, n.Touched},
		{&n.Observations, "erase observations", `DELETE FROM observations WHERE user_id = $1 AND id = ANY($2)`, e.ObservationIDs},
		{&n.RawFragments, "erase raw fragments", `DELETE FROM raw_fragments WHERE user_id = $1 AND entity_id = ANY($2)`, e.EntityIDs},
		{&n.RawFragments, "erase raw fragments", `DELETE FROM raw_fragments WHERE user_id = $1 AND source_id = ANY($2)`, e.SourceIDs},
		{&n.TimelineEvents, "erase timeline events", `DELETE FROM timeline_events WHERE user_id = $1 AND entity_id = ANY($2)`, e.EntityIDs},
		{&n.TimelineEvents, "erase timeline events", `DELETE FROM timeline_events WHERE user_id = $1 AND source_id = ANY($2)`, e.SourceIDs},
		{&n.Identifiers, "erase identifiers", `DELETE FROM entity_identifiers WHERE user_id = $1 AND entity_id = ANY($2)`, e.EntityIDs},
		{&n.Entities, "erase entities", `DELETE FROM entities WHERE user_id = $1 AND id = ANY($2)`, e.EntityIDs},
		{&n.Sources, "erase sources", `DELETE FROM sources WHERE user_id = $1 AND id = ANY($2)`, e.SourceIDs},
	}
	for _, s := range steps {
		if len(s.ids) == 0 {
			continue
		}
		tag, err := t.tx.Exec(ctx, s.sql, e.UserID, s.ids)
		if err != nil {
			return graph.ErasedCounts{}, wrap(s.what, err)
		}
		*s.count += int(tag.RowsAffected())
	}
	return n, nil
}

// ids runs a query of $1 (a user id) and $2 (ids) that selects ids, when
// there are ids to ask about.
func (t *tx) ids(ctx context.Context, query, userID string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, query, userID, ids)
	if err != nil {
		return nil, wrap("erase: read ids", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrap("erase: read ids", err)
}
