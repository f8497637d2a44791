package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/cypher"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/internal/byid"
)

var (
	relationshipsPut      = cypher.Must("relationships_put")
	relationshipsGet      = cypher.Must("relationships_get")
	relObservationsInsert = cypher.Must("relationship_observations_insert")
	relationshipObsOfMany = cypher.Must("relationship_observations_of")
	sourcesEnsure         = cypher.Must("sources_ensure")
)

// PutRelationships implements graph.DriverTx with one relationships_put per
// user and type of rs (the type fills the statement, as in
// PutRelationship). A period given twice is refused before anything runs:
// the rows of one UNWIND would MERGE it twice.
func (t *tx) PutRelationships(ctx context.Context, rs []graph.Relationship) error {
	keys := make([]string, len(rs))
	for i, r := range rs {
		keys[i] = r.ID + "@" + r.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	if key, ok := repeated(keys); ok {
		return fmt.Errorf("graph/neo4j: put relationships: period %s given twice", key)
	}
	type group struct{ user, typ string }
	for _, rs := range groupBy(rs, func(r graph.Relationship) group { return group{r.UserID, r.Type} }) {
		if err := t.putRelationships(ctx, rs); err != nil {
			return err
		}
	}
	return nil
}

// putRelationships runs relationships_put for rs, all of one user and type.
func (t *tx) putRelationships(ctx context.Context, rs []graph.Relationship) error {
	userID, typ := rs[0].UserID, rs[0].Type
	if err := t.enter(ctx, userID); err != nil {
		return err
	}
	if _, err := cypher.RelType(typ); err != nil {
		return fmt.Errorf("graph/neo4j: put relationships %s: %w: %w", rs[0].ID, graph.ErrInvalidRelationshipType, err)
	}
	rows := make([]any, len(rs))
	for i, r := range rs {
		meta, err := encodeJSON(r.Metadata)
		if err != nil {
			return err
		}
		prov, err := encodeJSON(r.Provenance)
		if err != nil {
			return err
		}
		rows[i] = map[string]any{
			"id": r.ID, "source_entity_id": r.SourceEntityID, "target_entity_id": r.TargetEntityID,
			"created_at": r.CreatedAt.UTC(), "metadata_json": meta, "provenance_json": prov,
			"metadata_props":    storableProps(r.Metadata, relationshipProps),
			"observation_count": int64(r.ObservationCount), "last_observation_at": r.LastObservationAt.UTC(),
			"ended_at": nullTime(r.EndedAt),
		}
	}
	recs, err := t.run(ctx, relationshipsPut, cypher.Fill{RelType: typ}, map[string]any{"userId": userID, "rows": rows, "userWrite": t.userWrites[userID]})
	if err != nil {
		return err
	}
	n, err := written(recs, relationshipsPut.Name())
	if err != nil {
		return err
	}
	if n < len(rs) {
		return fmt.Errorf("graph/neo4j: put relationships: %d of %d (from %s) have an endpoint that is not an entity of the user: %w",
			len(rs)-n, len(rs), rs[0].ID, graph.ErrNotFound)
	}
	return nil
}

// Relationships implements graph.DriverTx: relationships_get reads every
// period of the ids, of which it keeps the newest, in the order of ids.
func (t *tx) Relationships(ctx context.Context, userID string, ids []string) ([]graph.Relationship, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []graph.Relationship{}, nil
	}
	rows, err := t.run(ctx, relationshipsGet, cypher.Fill{}, map[string]any{"userId": userID, "ids": distinct(ids)})
	if err != nil {
		return nil, err
	}
	periods, err := mapRows(rows, "relationship", toRelationship)
	if err != nil {
		return nil, err
	}
	return byid.Newest(ids, periods, func(r graph.Relationship) string { return r.ID },
		func(r graph.Relationship) time.Time { return r.CreatedAt }), nil
}

// InsertRelationshipObservations implements graph.DriverTx as
// InsertObservations does: one relationship_observations_insert per user,
// an existing id skipped and reported as graph.ErrConflict, an id given
// twice refused before anything runs.
func (t *tx) InsertRelationshipObservations(ctx context.Context, obs []graph.RelationshipObservation) error {
	return insertSourced(ctx, t, relObservationsInsert, "relationship observation", obs,
		func(o graph.RelationshipObservation) (string, string, string) { return o.UserID, o.ID, o.SourceID },
		func(o graph.RelationshipObservation) (map[string]any, error) {
			meta, err := encodeJSON(o.Metadata)
			return map[string]any{
				"id": o.ID, "relationship_id": o.RelationshipID, "source_id": o.SourceID,
				"observed_at": o.ObservedAt.UTC(), "created_at": o.CreatedAt.UTC(), "specificity_score": o.SpecificityScore,
				"source_priority": int64(o.SourcePriority), "metadata_json": meta,
			}, err
		})
}

// RelationshipsObservations implements graph.DriverTx.
func (t *tx) RelationshipsObservations(ctx context.Context, userID string, relIDs []string) ([]graph.RelationshipObservation, error) {
	if err := t.enter(ctx, userID); err != nil {
		return nil, err
	}
	if len(relIDs) == 0 {
		return []graph.RelationshipObservation{}, nil
	}
	rows, err := t.run(ctx, relationshipObsOfMany, cypher.Fill{}, map[string]any{"userId": userID, "relationshipIds": distinct(relIDs)})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, "observation", toRelationshipObservation)
}

// EnsureSources implements graph.DriverTx with one sources_ensure per user
// of srcs, of the first source of each content hash; the statement gives
// back the user's source with each hash, and a hash it gives nothing for
// had its source's id taken (graph.ErrConflict).
func (t *tx) EnsureSources(ctx context.Context, srcs []graph.Source) ([]graph.Source, error) {
	type key struct{ user, hash string }
	found := make(map[key]graph.Source, len(srcs))
	for _, group := range groupBy(srcs, func(s graph.Source) string { return s.UserID }) {
		userID := group[0].UserID
		if err := t.enter(ctx, userID); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		var rows []any
		for _, s := range group {
			if seen[s.ContentHash] {
				continue
			}
			seen[s.ContentHash] = true
			prov, err := encodeJSON(s.Provenance)
			if err != nil {
				return nil, err
			}
			rows = append(rows, map[string]any{
				"id": s.ID, "content_hash": s.ContentHash, "kind": s.Kind, "mime_type": s.MimeType,
				"original_filename": s.OriginalFilename, "size": s.Size, "provenance_json": prov, "created_at": s.CreatedAt.UTC(),
			})
		}
		recs, err := t.run(ctx, sourcesEnsure, cypher.Fill{}, map[string]any{"userId": userID, "rows": rows})
		if err != nil {
			return nil, err
		}
		got, err := mapRows(recs, "source", toSource)
		if err != nil {
			return nil, err
		}
		for _, s := range got {
			found[key{s.UserID, s.ContentHash}] = s
		}
	}
	out := make([]graph.Source, len(srcs))
	for i, s := range srcs {
		var ok bool
		if out[i], ok = found[key{s.UserID, s.ContentHash}]; !ok {
			return nil, conflict("source", s.ID)
		}
	}
	return out, nil
}
