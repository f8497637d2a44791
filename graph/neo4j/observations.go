package neo4j

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
)

var (
	observationInsert    = cypher.Must("observation_insert")
	observationGet       = cypher.Must("observation_get")
	observationsPage     = cypher.Must("observations_page")
	observationsAll      = cypher.Must("observations_all")
	observationsBySource = cypher.Must("observations_by_source")
	observationsMove     = cypher.Must("observations_move")
	rawFragmentInsert    = cypher.Must("raw_fragment_insert")
)

// inserted settles a statement that returns no row when it inserted
// nothing: either the id exists (graph.ErrConflict), or the source the row
// hangs from is not one of the user's (a *graph.NotFoundError naming it),
// which source_get tells apart.
func (t *tx) inserted(ctx context.Context, rows []map[string]any, what, id, userID, sourceID string) error {
	if len(rows) > 0 {
		return nil
	}
	if _, err := t.Source(ctx, userID, sourceID); err != nil {
		return fmt.Errorf("graph/neo4j: insert %s %s: %w", what, id, err)
	}
	return conflict(what, id)
}

func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	if err := t.enter(ctx, o.UserID); err != nil {
		return err
	}
	fields, err := encodeJSON(o.Fields)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, observationInsert, cypher.Fill{}, map[string]any{
		"id": o.ID, "userId": o.UserID, "entityId": o.EntityID, "entityType": o.EntityType,
		"schemaVersion": o.SchemaVersion, "sourceId": o.SourceID, "observedAt": o.ObservedAt.UTC(),
		"createdAt": o.CreatedAt.UTC(), "specificityScore": o.SpecificityScore,
		"sourcePriority": int64(o.SourcePriority), "fieldsJson": fields, "originalEntityId": o.OriginalEntityID,
	})
	if err != nil {
		return err
	}
	return t.inserted(ctx, rows, "observation", o.ID, o.UserID, o.SourceID)
}

func (t *tx) Observation(ctx context.Context, userID, id string) (graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return graph.Observation{}, err
	}
	rows, err := t.run(ctx, observationGet, cypher.Fill{}, map[string]any{"userId": userID, "id": id})
	if err != nil {
		return graph.Observation{}, err
	}
	out, err := mapRows(rows, "observation", toObservation)
	if err != nil {
		return graph.Observation{}, err
	}
	if len(out) == 0 {
		return graph.Observation{}, notFound("observation", id)
	}
	return out[0], nil
}

func (t *tx) Observations(ctx context.Context, userID, entityID string, p graph.Page) ([]graph.Observation, int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, 0, err
	}
	rows, err := t.run(ctx, observationsPage, cypher.Fill{}, map[string]any{
		"userId": userID, "entityId": entityID, "offset": int64(max(p.Offset, 0)), "limit": int64(limitOr(p, 100)),
	})
	if err != nil {
		return nil, 0, err
	}
	return pageRows(rows, toObservation)
}

func (t *tx) AllObservations(ctx context.Context, userID, entityID string) ([]graph.Observation, error) {
	return t.observations(ctx, observationsAll, map[string]any{"userId": userID, "entityId": entityID})
}

func (t *tx) ObservationsBySource(ctx context.Context, userID, sourceID string) ([]graph.Observation, error) {
	return t.observations(ctx, observationsBySource, map[string]any{"userId": userID, "sourceId": sourceID})
}

func (t *tx) observations(ctx context.Context, st cypher.Statement, params map[string]any) ([]graph.Observation, error) {
	if err := t.enter(ctx, params["userId"].(string)); err != nil {
		return nil, err
	}
	rows, err := t.run(ctx, st, cypher.Fill{}, params)
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "observation", toObservation)
}

func (t *tx) MoveObservations(ctx context.Context, userID, from, to string) (int, error) {
	if err := t.enter(ctx, userID); err != nil {
		return 0, err
	}
	rows, err := t.run(ctx, observationsMove, cypher.Fill{}, map[string]any{"userId": userID, "from": from, "to": to})
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("graph/neo4j: observations_move returned %d rows", len(rows))
	}
	r := record{m: rows[0]}
	n := r.int("moved")
	return n, r.err
}

func (t *tx) InsertRawFragment(ctx context.Context, f graph.RawFragment) error {
	if err := t.enter(ctx, f.UserID); err != nil {
		return err
	}
	val, err := encodeValue(f.Value)
	if err != nil {
		return err
	}
	rows, err := t.run(ctx, rawFragmentInsert, cypher.Fill{}, map[string]any{
		"id": f.ID, "userId": f.UserID, "sourceId": f.SourceID, "entityId": f.EntityID,
		"entityType": f.EntityType, "field": f.Field, "valueJson": val, "createdAt": f.CreatedAt.UTC(),
	})
	if err != nil {
		return err
	}
	return t.inserted(ctx, rows, "raw fragment", f.ID, f.UserID, f.SourceID)
}
