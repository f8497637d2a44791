package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
)

var (
	observationsInsert   = cypher.Must("observations_insert")
	observationGet       = cypher.Must("observation_get")
	observationsGet      = cypher.Must("observations_get")
	observationsOf       = cypher.Must("observations_of_entities")
	observationsPage     = cypher.Must("observations_page")
	observationsAll      = cypher.Must("observations_all")
	observationsBySource = cypher.Must("observations_by_source")
	observationsMove     = cypher.Must("observations_move")
	rawFragmentsInsert   = cypher.Must("raw_fragments_insert")
	rawFragmentsList     = cypher.Must("raw_fragments_list")
	rawFragmentsOf       = cypher.Must("raw_fragments_of_entities")
)

// InsertObservation implements graph.DriverTx: a batch of one.
func (t *tx) InsertObservation(ctx context.Context, o graph.Observation) error {
	return t.InsertObservations(ctx, []graph.Observation{o})
}

// InsertObservations implements graph.DriverTx with one observations_insert
// per user of obs (in practice one). An existing id is skipped rather than
// failing the statement, which would end the transaction, and reported as
// graph.ErrConflict; an id given twice is refused before anything runs.
func (t *tx) InsertObservations(ctx context.Context, obs []graph.Observation) error {
	return insertSourced(ctx, t, observationsInsert, "observation", obs,
		func(o graph.Observation) (string, string, string) { return o.UserID, o.ID, o.SourceID },
		func(o graph.Observation) (map[string]any, error) {
			fields, err := encodeJSON(o.Fields)
			return map[string]any{
				"id": o.ID, "entity_id": o.EntityID, "entity_type": o.EntityType,
				"schema_version": o.SchemaVersion, "source_id": o.SourceID, "observed_at": o.ObservedAt.UTC(),
				"created_at": o.CreatedAt.UTC(), "specificity_score": o.SpecificityScore,
				"source_priority": int64(o.SourcePriority), "fields_json": fields, "original_entity_id": o.OriginalEntityID,
			}, err
		})
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

// EntitiesObservations implements graph.DriverTx with one
// observations_of_entities, an index seek per entity.
func (t *tx) EntitiesObservations(ctx context.Context, userID string, entityIDs []string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(entityIDs) == 0 {
		return []graph.Observation{}, nil
	}
	return t.observations(ctx, observationsOf, map[string]any{"userId": userID, "entityIds": distinct(entityIDs)})
}

// ObservationsByID implements graph.DriverTx with one observations_get; the
// observations come back in the order of ids, each once.
func (t *tx) ObservationsByID(ctx context.Context, userID string, ids []string) ([]graph.Observation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []graph.Observation{}, nil
	}
	found, err := t.observations(ctx, observationsGet, map[string]any{"userId": userID, "ids": distinct(ids)})
	if err != nil {
		return nil, err
	}
	return byid.InOrder(ids, found, func(o graph.Observation) string { return o.ID }), nil
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

// InsertRawFragment implements graph.DriverTx: a batch of one.
func (t *tx) InsertRawFragment(ctx context.Context, f graph.RawFragment) error {
	return t.InsertRawFragments(ctx, []graph.RawFragment{f})
}

// InsertRawFragments implements graph.DriverTx with one raw_fragments_insert
// per user of fs, settled as InsertObservations settles its inserts.
func (t *tx) InsertRawFragments(ctx context.Context, fs []graph.RawFragment) error {
	return insertSourced(ctx, t, rawFragmentsInsert, "raw fragment", fs,
		func(f graph.RawFragment) (string, string, string) { return f.UserID, f.ID, f.SourceID },
		func(f graph.RawFragment) (map[string]any, error) {
			val, err := encodeValue(f.Value)
			return map[string]any{
				"id": f.ID, "source_id": f.SourceID, "entity_id": f.EntityID, "entity_type": f.EntityType,
				"field": f.Field, "value_json": val, "created_at": f.CreatedAt.UTC(),
			}, err
		})
}

// RawFragments implements graph.DriverTx with one raw_fragments_list, or
// one raw_fragments_of_entities for some entities' fragments.
func (t *tx) RawFragments(ctx context.Context, q graph.RawFragmentQuery) ([]graph.RawFragment, error) {
	if err := t.enter(ctx, q.UserID); err != nil {
		return nil, err
	}
	if q.EntityIDs != nil && len(q.EntityIDs) == 0 {
		return []graph.RawFragment{}, nil
	}
	stmt, params := rawFragmentsList, map[string]any{"userId": q.UserID, "entityType": q.EntityType, "entityIds": nil}
	if q.EntityIDs != nil {
		stmt, params["entityIds"] = rawFragmentsOf, slices.Compact(slices.Sorted(slices.Values(q.EntityIDs)))
	}
	rows, err := t.run(ctx, stmt, cypher.Fill{}, params)
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "fragment", toRawFragment)
}
